import { createWriteStream } from 'node:fs';
import { mkdir, opendir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LocalIoError } from '../errors.js';

/**
 * A report file, streamed from its chunks into `<file>.<pid>.part` and renamed over it once
 * whole: a crash mid-way leaves the previous copy, never half a document (run.json is the trace
 * a lost ledger is found by). What a killed writer left beside it is removed first. A failure to
 * write is reported (exit 4), never silent.
 */
export async function writeReportFile(file: string, content: string | AsyncIterable<string>): Promise<void> {
  const partial = `${file}.${process.pid}.part`;
  try {
    await removeDebris(file);
    await pipeline(typeof content === 'string' ? [content] : content, createWriteStream(partial));
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    if (!isFileError(error)) throw error;
    throw new LocalIoError(`cannot write ${file}: ${(error as Error).message}`, 'E_REPORT', error);
  }
}

/**
 * Removes `<file>.<pid>.part` (and `.partial`, as earlier versions named the page's) left by a
 * writer that was killed: one whose process is gone. A live one may be writing it right now.
 */
async function removeDebris(file: string): Promise<void> {
  const prefix = `${path.basename(file)}.`;
  for await (const entry of await opendir(path.dirname(file))) {
    if (!entry.name.startsWith(prefix)) continue;
    const pid = /^(\d+)\.part(?:ial)?$/.exec(entry.name.slice(prefix.length))?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) await rm(path.join(path.dirname(file), entry.name), { force: true });
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A write that failed on the file system (full disk, no permission), not a bug of ours. */
function isFileError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException | null)?.code === 'string' && (error as NodeJS.ErrnoException).syscall !== undefined;
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
    // mkdir meets a file where a folder should be: EEXIST for the folder itself, ENOTDIR above it.
    const file = code === 'EEXIST' || code === 'ENOTDIR' ? await fileInPlaceOf(dir) : undefined;
    const problem = file === undefined ? `(${code}): fix the folder's permissions or pass --out DIR` : `: ${file} is a file, not a folder; move it away or pass --out DIR`;
    throw new LocalIoError(`cannot write results to ${dir}${problem}. Nothing was sent.`, 'E_OUTPUT', error);
  }
}

/** The nearest of `dir` and the folders above it that exists as something other than a folder. */
async function fileInPlaceOf(dir: string): Promise<string | undefined> {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const found = await stat(at).catch(() => undefined);
    if (found !== undefined) return found.isDirectory() ? undefined : at;
    if (path.dirname(at) === at) return undefined;
  }
}
