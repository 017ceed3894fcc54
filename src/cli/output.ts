/**
 * A reader that goes away (`… | head -3`, a closed terminal or ssh session) makes the next write
 * to stdout or stderr fail (EPIPE, EIO) with an 'error' event that would end the process mid-run,
 * its jobs caught `submitting`. The work matters more than its narration: such a stream is
 * destroyed and from then on not written to, and the run carries on to its end.
 */
export function keepRunningWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => stream.destroy());
}

function isOpen(stream: NodeJS.WriteStream): boolean {
  return stream.writable && !stream.destroyed;
}

/** Whether anyone still reads stdout: a command printing a long listing stops when not. */
export function stdoutOpen(): boolean {
  return isOpen(process.stdout);
}

/**
 * Writes text chunks to stdout as fast as the reader takes them (a million-job document is never
 * one string), and resolves once the last is handed to the OS, so an exit cannot cut it. A stdout
 * that nobody reads any more ends the writing: there is no one left to tell.
 */
export async function writeStdoutChunks(chunks: AsyncIterable<string> | Iterable<string>): Promise<void> {
  const out = process.stdout;
  for await (const chunk of chunks) {
    if (!isOpen(out)) return;
    if (!out.write(chunk)) await drainedOrGone(out);
  }
  await new Promise<void>((resolve) => (isOpen(out) ? out.write('', () => resolve()) : resolve()));
}

/** A text on stdout, ended by a newline. */
export function writeStdout(text: string): Promise<void> {
  return writeStdoutChunks([text.endsWith('\n') ? text : `${text}\n`]);
}

function drainedOrGone(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of ['drain', 'close', 'error'] as const) stream.off(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error'] as const) stream.once(event, done);
  });
}

/** A command's --json document: versioned, so scripts can tell a future change of shape. */
export function writeJsonDocument(document: object): Promise<void> {
  return writeStdout(JSON.stringify({ schema_version: 1, ...document }, null, 2));
}

/** The exit code of an unexpected internal error: a bug, reported with its stack on stderr. */
export const INTERNAL_ERROR_EXIT = 70;

/**
 * Whether the command line asks for --json (or --format json), read from the raw arguments (the
 * last of --json, --json=true|false, --json true|false, --no-json wins): a usage error has no
 * parsed ones.
 */
export function asksForJson(argv: readonly string[]): boolean {
  let json = false;
  let format: string | undefined;
  for (const [i, arg] of argv.entries()) {
    if (arg === '--') break;
    if (arg === '--json') json = argv[i + 1] !== 'false';
    else if (arg === '--json=true') json = true;
    else if (arg === '--json=false' || arg === '--no-json') json = false;
    else if (arg === '--format') format = argv[i + 1];
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length);
  }
  return json || format === 'json';
}

export function logLine(line: string): void {
  if (isOpen(process.stderr)) process.stderr.write(`${line}\n`);
}

export function useColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && process.env['NO_COLOR'] === undefined && process.env['TERM'] !== 'dumb';
}
