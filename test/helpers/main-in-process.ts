import { Readable } from 'node:stream';
import { vi } from 'vitest';
import { main } from '../../src/cli/app.js';
import type { CliResult } from './cli.js';

/**
 * The CLI's entry point in this process, for refusals of what was typed or read (each decided
 * before a command sends anything): the exit code it returns and what it wrote on
 * stdout and stderr. A spawn costs about half a second of startup; one spawn per distinct
 * behaviour shows the process. It takes this process's stdout, stderr, stdin (`input`, as a
 * pipe would give it) and environment while it runs: not for tests that run side by side
 * (describe.concurrent).
 */
export async function mainInProcess(
  argv: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<Pick<CliResult, 'code' | 'stdout' | 'stderr'>> {
  // The environment a spawn gets from cliEnv: none of the developer's token or base URL, no colour.
  const variables = { MEDIABATCH_TOKEN: undefined, MEDIABATCH_BASE_URL: undefined, NO_COLOR: '1', ...env };
  for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
  let stdout = '';
  let stderr = '';
  // The CLI waits for a write's callback before it goes on (a flushed document): the capture calls it.
  const capture = (stream: NodeJS.WriteStream, append: (text: string) => void) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(chunk.toString());
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      if (done !== undefined) queueMicrotask(done);
      return true;
    });
  // The CLI's stop handlers are the process's: a real CLI exits after main, this worker goes on.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const handlersBefore = new Map(signals.map((name) => [name, new Set(process.listeners(name))]));
  const spies = [
    capture(process.stdout, (text) => (stdout += text)),
    capture(process.stderr, (text) => (stderr += text)),
    ...(input === undefined ? [] : [vi.spyOn(process, 'stdin', 'get').mockReturnValue(piped(input))]),
  ];
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    for (const spy of spies) spy.mockRestore();
    vi.unstubAllEnvs();
    for (const name of signals) {
      for (const handler of process.listeners(name)) if (!handlersBefore.get(name)?.has(handler)) process.off(name, handler);
    }
  }
}

/** A stdin that holds `input` and ends, as `echo … |` gives one. */
function piped(input: string): typeof process.stdin {
  return Readable.from([Buffer.from(input)], { objectMode: false }) as typeof process.stdin;
}
