import { close, closeSync, fstatSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import path from 'node:path';
import { terminalSafeJson } from '../control-chars.js';
import { LocalIoError } from '../errors.js';

/** One line of a log file: the event's name, then its fields (snake_case); `at` is added. */
export type LogRecord = { event: string } & Record<string, unknown>;

export interface LogFile {
  readonly path: string;
  /** Appends the record as one JSON line with `at` (ISO 8601, UTC). Never waits, never throws. */
  write(record: LogRecord): void;
  /** Writes what is left, then closes the file. */
  close(): Promise<void>;
}

/** Lines waiting for a slow disk beyond this are dropped (and said once): the run matters more than its log. */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

/**
 * Opens `file` for appending (a resumed run adds to the same file; so may two runs at once, a
 * line each at a time), creating its folder. Throws a LocalIoError (exit 4) when it cannot, so a
 * run refuses before it sends anything. Lines are written in the background, a batch at a time;
 * whatever is still waiting when the process exits (a second Ctrl-C, a crash) is written then,
 * synchronously. A write that fails is said once on stderr through `warn`, and the run goes on.
 */
export function openLogFile(file: string, warn: (message: string) => void): LogFile {
  const fd = openForAppend(file);
  let pending: string[] = [];
  let pendingBytes = 0;
  let writing = false;
  let failed = false;
  let dropped = 0;
  let closed = false;
  const idle: (() => void)[] = [];

  const settle = (): void => {
    for (const resolve of idle.splice(0)) resolve();
  };
  const fail = (error: NodeJS.ErrnoException): void => {
    failed = true;
    pending = [];
    warn(`--log-file ${file}: cannot write it (${error.code ?? error.message}); the run goes on without its log`);
  };
  const next = (): void => {
    if (failed || pending.length === 0) {
      writing = false;
      return settle();
    }
    writing = true;
    const buffer = Buffer.from(pending.join(''));
    pending = [];
    pendingBytes = 0;
    writeAll(buffer);
  };
  // The batch handed to the thread pool, and the file's size before it: at exit, whether it landed.
  let inFlight: { buffer: Buffer; sizeBefore: number } | undefined;
  const writeAll = (buffer: Buffer): void => {
    inFlight = { buffer, sizeBefore: sizeOf(fd) };
    write(fd, buffer, 0, buffer.length, null, (error, written) => {
      inFlight = undefined;
      if (error) return (fail(error), next());
      if (written < buffer.length) return writeAll(buffer.subarray(written));
      next();
    });
  };
  // At exit nothing asynchronous runs any more: what still waits goes down now, the batch in the
  // thread pool too when the file did not grow by it (a pool busy with downloads may not have begun it).
  const atExit = (): void => {
    if (closed) return;
    closed = true;
    try {
      const batch = inFlight;
      if (!failed && batch !== undefined && !(batch.sizeBefore >= 0 && sizeOf(fd) >= batch.sizeBefore + batch.buffer.length)) writeSync(fd, batch.buffer);
      if (!failed && pending.length > 0) writeSync(fd, pending.join(''));
      closeSync(fd);
    } catch {
      // Exiting: there is no one left to tell.
    }
  };
  process.on('exit', atExit);

  return {
    path: file,
    write: (record) => {
      if (failed || closed) return;
      const line = `${terminalSafeJson({ at: new Date().toISOString(), ...record })}\n`;
      if (pendingBytes + line.length > MAX_PENDING_BYTES) {
        if (dropped++ === 0) warn(`--log-file ${file}: the disk is not keeping up; lines are dropped until it does`);
        return;
      }
      if (dropped > 0) pending.push(`${terminalSafeJson({ at: new Date().toISOString(), event: 'log_lines_dropped', count: dropped })}\n`);
      dropped = 0;
      pending.push(line);
      pendingBytes += line.length;
      if (!writing) next();
    },
    close: async () => {
      if (writing) await new Promise<void>((resolve) => idle.push(resolve));
      if (closed) return;
      closed = true;
      process.off('exit', atExit);
      await new Promise<void>((resolve) => close(fd, () => resolve()));
    },
  };
}

/** -1 when it cannot be read: the batch is then written again rather than lost. */
function sizeOf(fd: number): number {
  try {
    return fstatSync(fd).size;
  } catch {
    return -1;
  }
}

function openForAppend(file: string): number {
  const folder = path.dirname(path.resolve(file));
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    throw refused(file, `cannot make its folder ${folder}`, error);
  }
  try {
    return openSync(file, 'a');
  } catch (error) {
    throw refused(file, 'cannot open it for appending', error);
  }
}

/** What a person reads for the usual causes, beside the system's code. */
const CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
  EEXIST: 'a file stands where a folder should be',
  ENOTDIR: 'a file stands where a folder should be',
  EISDIR: 'it is a folder',
  ENOSPC: 'the disk is full',
};

function refused(file: string, what: string, error: unknown): LocalIoError {
  const code = (error as NodeJS.ErrnoException).code ?? 'unwritable';
  const cause = CAUSES[code] === undefined ? code : `${code}: ${CAUSES[code]}`;
  return new LocalIoError(
    `--log-file ${file}: ${what} (${cause}); give a file in a folder you can write (or leave --log-file out). Nothing was sent.`,
    'E_LOG_FILE',
    error,
  );
}
