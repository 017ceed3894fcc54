/**
 * What `run --log-file` writes: the run's start, every event, its end. Fields are snake_case;
 * money is in decimal dollars; no token or secret is ever among them (none reaches this code).
 */
import { close, closeSync, constants, fstatSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { terminalSafeJson } from '../control-chars.js';
import { LocalIoError } from '../errors.js';
import { microToUsd } from '../money.js';
import type { RunEvent, RunPlan, StatusSummary } from '../runner/index.js';
import { snakeCaseKeys } from '../report/events.js';
import { errorDocument } from './error-document.js';
import type { SharedArgs } from './options.js';
import { logLine } from './output.js';
import { resolveBaseUrl } from './session.js';

/** Filled in by the run once it has its summary, for the log's last line. */
export interface RunLogEnd {
  summary?: StatusSummary | undefined;
}

/**
 * Runs `work` with the run's log open (from --log-file, else MEDIABATCH_LOG_FILE; none: no log):
 * its first line before anything else happens, its last line with the exit code however the
 * run ends (an error included, which is then thrown on), every line on disk before it returns.
 * A file that cannot be opened throws before `work` starts (exit 4, nothing sent).
 */
export async function withRunLog(
  args: SharedArgs & { 'log-file'?: string | undefined },
  manifestPath: string,
  work: (log: LogFile | undefined, end: RunLogEnd) => Promise<number>,
  clock: Clock,
): Promise<number> {
  const file = args['log-file'] ?? (process.env['MEDIABATCH_LOG_FILE'] || undefined);
  const log = file === undefined ? undefined : new LogFile(file, (message) => logLine(`warning: ${message}`), clock);
  const end: RunLogEnd = {};
  try {
    log?.write(runStartRecord(args, manifestPath));
    const exitCode = await work(log, end);
    log?.write(runEndRecord(exitCode, end.summary));
    return exitCode;
  } catch (error) {
    log?.write(runEndRecord(errorDocument(error).error.exit_code, end.summary, error));
    throw error;
  } finally {
    await log?.close();
  }
}

/** An event of the runner as a log line: `id` is the job's, `untilMs` an ISO time. */
export function runEventRecord(event: RunEvent): LogRecord {
  const { kind, ...fields } = event;
  const record: LogRecord = { event: kind };
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'id') record['job_id'] = value;
    else if (key === 'untilMs' && typeof value === 'number') record['until'] = new Date(value).toISOString();
    else Object.assign(record, snakeCaseKeys({ [key]: value }));
  }
  return record;
}

/** Never written to a log, whatever a future option is called: a secret has no business there. */
const SECRET = /token|secret|password|credential/i;

/**
 * The run's first line: every option given, as parsed (kebab-case keys become snake_case),
 * with the base URL only as checked (a URL with a password in it is refused, never logged).
 */
function runStartRecord(args: SharedArgs, manifestPath: string): LogRecord {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    // yargs also gives each kebab-case key in camelCase, and its own `_` and `$0`.
    if (key === '_' || key === '$0' || key === 'manifest' || key === 'base-url' || /[A-Z]/.test(key)) continue;
    if (value === undefined || (SECRET.test(key) && key !== 'token-file')) continue;
    options[key.replaceAll('-', '_')] = value;
  }
  return { event: 'run_start', pid: process.pid, manifest: manifestPath, base_url: checkedBaseUrl(args), options };
}

function checkedBaseUrl(args: SharedArgs): string | undefined {
  if (args.sim) return undefined;
  try {
    return resolveBaseUrl(args, process.env);
  } catch {
    return undefined;
  }
}

/** What the run found to do, once pricing, the budget and the balance let it start. */
export function runPlanRecord(plan: RunPlan, total: number, planName: string): LogRecord {
  const { budget } = plan;
  return {
    event: 'run_plan',
    plan: planName,
    jobs: total,
    to_submit: plan.send.jobs,
    to_follow: plan.counts.submitted,
    skipped: plan.skip,
    in_doubt: plan.counts.in_doubt,
    done: plan.counts.done,
    failed: plan.counts.failed,
    to_send_usd: microToUsd(budget.toSendMicro),
    spent_usd: microToUsd(budget.spentMicro),
    budget_usd: budget.budgetMicro === null ? null : microToUsd(budget.budgetMicro),
  };
}

/** The run's last line: its exit code, the counts and spend when it got that far, the error when one ended it. */
function runEndRecord(exitCode: number, summary: StatusSummary | undefined, error?: unknown): LogRecord {
  const record: LogRecord = { event: 'run_end', exit_code: exitCode };
  if (summary !== undefined) {
    record['counts'] = summary.counts;
    record['spent_usd'] = microToUsd(summary.spentMicro);
    record['budget_usd'] = summary.budgetMicro === null ? null : microToUsd(summary.budgetMicro);
  }
  if (error !== undefined) {
    const { code, message } = errorDocument(error).error;
    record['error'] = { code, message };
  }
  return record;
}

/** One line of a log file: the event's name, then its fields (snake_case); `at` is added. */
export type LogRecord = { event: string } & Record<string, unknown>;

/** Lines waiting for a slow disk beyond this are dropped (and said once): the run matters more than its log. */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

const writeToFile = promisify(write);

/**
 * A log file opened for appending (a resumed run adds to the same file; so may two runs at once,
 * a line each at a time), its folder created. Throws a LocalIoError (exit 4) when it cannot, so a
 * run refuses before it sends anything. Lines are written in the background, a batch at a time;
 * whatever is still waiting when the process exits (a second Ctrl-C, a crash) is written then,
 * synchronously. A write that fails is said once on stderr through `warn`, and the run goes on.
 */
export class LogFile {
  #pending: string[] = [];
  #pendingBytes = 0;
  /** The batch handed to the thread pool, and the file's size before it: at exit, whether it landed. */
  #inFlight: { buffer: Buffer; sizeBefore: number } | undefined;
  /** Set while batches are being written; lines that come meanwhile make the next one. */
  #writing: Promise<void> | undefined;
  #failed = false;
  #closed = false;
  #dropped = 0;
  readonly #fd: number;
  readonly #atExit = (): void => this.#flushSync();

  constructor(
    readonly path: string,
    private readonly warn: (message: string) => void,
    private readonly clock: Clock,
  ) {
    this.#fd = openForAppend(path);
    process.on('exit', this.#atExit);
  }

  /** Appends the record as one JSON line with `at` (ISO 8601, UTC). Never waits, never throws. */
  write(record: LogRecord): void {
    if (this.#failed || this.#closed) return;
    const line = this.#line(record);
    if (this.#pendingBytes + line.length > MAX_PENDING_BYTES) {
      if (this.#dropped++ === 0) this.warn(`--log-file ${this.path}: the disk is not keeping up; lines are dropped until it does`);
      return;
    }
    if (this.#dropped > 0) this.#pending.push(this.#line({ event: 'log_lines_dropped', count: this.#dropped }));
    this.#dropped = 0;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    this.#writing ??= this.#writeBatches();
  }

  #line(record: LogRecord): string {
    return `${terminalSafeJson({ at: new Date(this.clock.nowMs()).toISOString(), ...record })}\n`;
  }

  /** Writes what is left, then closes the file. */
  async close(): Promise<void> {
    await this.#writing;
    if (this.#closed) return;
    this.#closed = true;
    process.off('exit', this.#atExit);
    await new Promise<void>((resolve) => close(this.#fd, () => resolve()));
  }

  async #writeBatches(): Promise<void> {
    while (!this.#failed && this.#pending.length > 0) {
      let rest = Buffer.from(this.#pending.join(''));
      this.#pending = [];
      this.#pendingBytes = 0;
      try {
        while (rest.length > 0) {
          this.#inFlight = { buffer: rest, sizeBefore: sizeOf(this.#fd) };
          rest = rest.subarray((await writeToFile(this.#fd, rest, 0, rest.length, null)).bytesWritten);
        }
      } catch (error) {
        this.#failed = true;
        this.#pending = [];
        const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        this.warn(`--log-file ${this.path}: cannot write it (${code}); the run goes on without its log`);
      }
      this.#inFlight = undefined;
    }
    this.#writing = undefined;
  }

  /**
   * At exit nothing asynchronous runs any more: what still waits goes down now, and the batch in
   * the thread pool too when the file did not grow by it (a pool busy with downloads may not
   * have begun it; written twice is better than lost).
   */
  #flushSync(): void {
    if (this.#closed || this.#failed) return;
    this.#closed = true;
    try {
      const batch = this.#inFlight;
      const landed = batch === undefined || (batch.sizeBefore >= 0 && sizeOf(this.#fd) >= batch.sizeBefore + batch.buffer.length);
      if (!landed) writeSync(this.#fd, batch.buffer);
      if (this.#pending.length > 0) writeSync(this.#fd, this.#pending.join(''));
      closeSync(this.#fd);
    } catch {
      // Exiting: there is no one left to tell.
    }
  }
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
  let fd: number;
  try {
    // Without O_NONBLOCK a FIFO nobody reads would block this thread, and every signal, for ever.
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw refused(file, 'cannot open it for appending', error);
  }
  if (fstatSync(fd).isFile()) return fd;
  closeSync(fd);
  // A pipe, terminal or device could block a write (or the exit's last one) for ever.
  throw refused(file, 'it is a pipe or a device, not a regular file');
}

/** What a person reads for the usual causes, beside the system's code. */
const CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
  EEXIST: 'a file stands where a folder should be',
  ENOTDIR: 'a file stands where a folder should be',
  EISDIR: 'it is a folder',
  ENXIO: 'a pipe nobody reads',
  ENOSPC: 'the disk is full',
};

function refused(file: string, what: string, error?: unknown): LocalIoError {
  const code = error === undefined ? undefined : ((error as NodeJS.ErrnoException).code ?? 'unwritable');
  const cause = code === undefined ? '' : CAUSES[code] === undefined ? ` (${code})` : ` (${code}: ${CAUSES[code]})`;
  return new LocalIoError(
    `--log-file ${file}: ${what}${cause}; give a file in a folder you can write (or leave --log-file out). Nothing was sent.`,
    'E_LOG_FILE',
    error,
  );
}
