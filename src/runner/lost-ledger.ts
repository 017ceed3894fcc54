import { readdirSync, readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { RunFiles } from './reports.js';

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
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return undefined;
  }
  return entries.some((name) => !name.startsWith('.')) ? { what: `${folder} holds results of an earlier run`, path: folder } : undefined;
}

/** States of a job that has left this machine (a request id, or perhaps one nobody heard). */
const NOT_SENT = new Set(['pending', 'skipped']);

/** A run report (`finished: false` is written before the first submit) that says requests left. */
function requestsIn(report: string): EarlierRun | undefined {
  let parsed: { kind?: unknown; finished?: unknown; jobs?: { state?: unknown; request_id?: unknown }[] };
  try {
    parsed = JSON.parse(readFileSync(report, 'utf8')) as typeof parsed;
  } catch {
    // No report, or not one of ours: nothing to go by.
    return undefined;
  }
  if (parsed.kind !== 'run' || !Array.isArray(parsed.jobs)) return undefined;
  const sent = parsed.jobs.filter((job) => typeof job?.request_id === 'string' || (typeof job?.state === 'string' && !NOT_SENT.has(job.state))).length;
  if (sent > 0) return { what: `${report} lists ${sent} requests already sent`, path: report };
  if (parsed.finished === false) return { what: `${report} says a run started sending requests`, path: report };
  return undefined;
}
