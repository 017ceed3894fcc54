import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LocalIoError } from '../errors.js';

/** Writes to stdout and resolves once the data is handed to the OS, so an exit cannot cut it. */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`, (error) => (error ? reject(error) : resolve()));
  });
}

export function writeJson(value: unknown): Promise<void> {
  return writeStdout(JSON.stringify(value, null, 2));
}

export function logLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function useColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && process.env['NO_COLOR'] === undefined && process.env['TERM'] !== 'dumb';
}

/** Report files beside the manifest; a failure to write them is reported, never silent. */
export async function writeReportFile(file: string, content: string): Promise<void> {
  try {
    await writeFile(file, content);
  } catch (error) {
    throw new LocalIoError(`cannot write ${file}: ${(error as Error).message}`, 'E_REPORT', error);
  }
}

/**
 * Makes the results folder and proves a file can be written in it, before anything is paid
 * for: a run that cannot save its results should stop with a message, not after each job.
 */
export async function ensureWritableFolder(dir: string): Promise<void> {
  const probe = path.join(dir, `.mediabatch-probe-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, '');
    await rm(probe, { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new LocalIoError(
      `cannot write results to ${dir} (${code}): fix the folder's permissions or pass --out DIR. Nothing was sent.`,
      'E_OUTPUT',
      error,
    );
  }
}
