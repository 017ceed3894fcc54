import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { RunFiles } from './reports.js';

/**
 * Meta key: a run of this very ledger wrote the traces beside it. A ledger that holds it and says
 * nothing was sent is telling the truth (a run killed after its trace, before its first submit);
 * a lost ledger's replacement never holds it, since no run of it got past the check.
 */
export const TRACES_OF_THIS_LEDGER = 'traces_written';

/**
 * The ledger is the only record of what was paid for. When it is gone (or records no job) but
 * an earlier run left results in the folder, or a run report saying requests left (all a
 * --no-wait run, or a run killed mid-way, leaves), a new ledger would send, and charge, every
 * job again. Throws ConfigError (exit 4) naming every trace found.
 */
export function refuseLostLedger(files: RunFiles): void {
  const traces = [resultsIn(files.out), requestsIn(files.runJson), requestsIn(files.legacyReport)].filter((trace) => trace !== undefined);
  if (traces.length === 0) return;
  const what = traces.map((trace) => trace.what).join(' and ');
  const where = traces.map((trace) => trace.path).join(' and ');
  throw new ConfigError(
    `no ledger with jobs at ${files.db}, but ${what}: without its ledger every job would be sent, and paid for, again. Restore the ledger (or pass --db PATH), or move ${where} aside to start over.`,
    'E_LEDGER_MISSING',
  );
}

interface EarlierRun {
  what: string;
  path: string;
}

function resultsIn(folder: string): EarlierRun | undefined {
  const entries = tryOr(() => readdirSync(folder), []);
  return entries.some((name) => !name.startsWith('.')) ? { what: `${folder} holds results of an earlier run`, path: folder } : undefined;
}

/** States of a job that has left this machine (a request id, or perhaps one nobody heard). */
const NOT_SENT = new Set(['pending', 'skipped', 'blocked']);

/** A report this small is read whole; a larger one (a run of many jobs) by its head, which holds the counts. */
const WHOLE_REPORT_BYTES = 1024 * 1024;
const HEAD_BYTES = 64 * 1024;

/** A run report (`finished: false` is written before the first submit) that says requests left. */
function requestsIn(report: string): EarlierRun | undefined {
  const whole = (): boolean => statSync(report).size <= WHOLE_REPORT_BYTES;
  const text = tryOr(() => (whole() ? readFileSync(report, 'utf8') : readHead(report)), undefined);
  const found = text === undefined ? undefined : sentIn(text);
  if (found === undefined) return undefined;
  if (found.sent > 0) return { what: `${report} lists ${found.sent} requests already sent`, path: report };
  if (found.finished === false) return { what: `${report} says a run started sending requests`, path: report };
  return undefined;
}

function readHead(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    return tryOr(() => buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0)).toString('utf8'), '');
  } finally {
    closeSync(fd);
  }
}

function tryOr<T, U>(read: () => T, otherwise: U): T | U {
  try {
    return read();
  } catch {
    return otherwise;
  }
}

/**
 * What a run report says was sent: from its job list when it is whole, else from the counts at
 * its head (mediabatch writes them first). Undefined when it is not a run report of ours.
 */
function sentIn(text: string): { sent: number; finished: unknown } | undefined {
  try {
    const parsed = JSON.parse(text) as { kind?: unknown; finished?: unknown; jobs?: { state?: unknown; request_id?: unknown }[] };
    if (parsed.kind !== 'run' || !Array.isArray(parsed.jobs)) return undefined;
    const sent = parsed.jobs.filter((job) => typeof job?.request_id === 'string' || (typeof job?.state === 'string' && !NOT_SENT.has(job.state))).length;
    return { sent, finished: parsed.finished };
  } catch {
    // Cut short at its head (or not JSON at all): read the head's fields.
  }
  if (!/^\{\s*"kind":\s*"run"/.test(text)) return undefined;
  const finished = /"finished":\s*(true|false)/.exec(text)?.[1];
  const counts = /"counts":\s*(\{[^{}]*\})/.exec(text)?.[1];
  const parsed = tryOr(() => JSON.parse(counts ?? '') as Record<string, unknown>, undefined);
  if (parsed === undefined) return undefined;
  const sent = Object.entries(parsed)
    .filter(([state]) => !NOT_SENT.has(state))
    .reduce((n, [, count]) => n + (typeof count === 'number' ? count : 0), 0);
  return { sent, finished: finished === undefined ? undefined : finished === 'true' };
}
