import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LocalIoError } from '../../src/errors.js';
import type { Simulator } from '../../src/sim/index.js';
import { collect, runCli, startCli, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { openSqliteLedger, type Ledger } from '../../src/store/index.js';

/** Jobs end in tens of milliseconds in the simulator: the tests poll it at that pace, not the service's. */
export const FAST = { pendingMs: { txt2audio: 20, img2video: 50 }, processingMs: { txt2audio: 40, img2video: 100 } };

/** What the CLI needs to talk to `sim` quickly: no client pace, short polls. */
export function simArgs(sim: Simulator): string[] {
  return ['--base-url', sim.url, '--plan', 'unlimited', '--poll-ms', '50'];
}

export function cliAgainst(sim: Simulator, args: string[], timeoutMs = 60_000): Promise<CliResult> {
  return runCli([...args, ...simArgs(sim)], { env: { MEDIABATCH_TOKEN: sim.token }, timeoutMs });
}

/** `cliAgainst` through the CLI's main in this process: for refusals, where the process adds nothing. */
export function mainAgainst(sim: Simulator, args: string[]): Promise<Pick<CliResult, 'code' | 'stdout' | 'stderr'>> {
  return mainInProcess([...args, ...simArgs(sim)], { MEDIABATCH_TOKEN: sim.token });
}

export function startAgainst(sim: Simulator, args: string[]) {
  return startCli([...args, ...simArgs(sim)], { env: { MEDIABATCH_TOKEN: sim.token } });
}

export { collect };

export interface Row {
  id: string;
  state: string;
  request_id: string | null;
  last_error: string | null;
  result_path: string | null;
}

/** The ledger's jobs as `status` reads them, in manifest order (read-only: a run may be writing). */
export async function ledgerRows(file: string | Ledger): Promise<Row[]> {
  if (typeof file !== 'string') return rowsOf(file);
  if (!existsSync(file)) return [];
  let ledger;
  try {
    ledger = await openSqliteLedger(file, { mode: 'read-only' });
  } catch (error) {
    // A ledger killed before its schema was complete records no job yet (jobs come after it).
    if (error instanceof LocalIoError && (error.code === 'E_NO_LEDGER' || error.code === 'E_LEDGER_OLD')) return [];
    throw error;
  }
  try {
    return await rowsOf(ledger);
  } finally {
    await ledger.close();
  }
}

async function rowsOf(ledger: Ledger): Promise<Row[]> {
  return (await ledger.readJobs({ scope: 'all', limit: 100_000 })).map((job) => ({
    id: job.id,
    state: job.state,
    request_id: job.requestId,
    last_error: job.lastError,
    result_path: job.resultPath,
  }));
}

/** Raw on purpose: whether the file itself is sound is below what any ledger interface shows. */
export function quickCheck(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('quick_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

export function byState(rows: readonly Row[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.state] = (counts[row.state] ?? 0) + 1;
  return counts;
}

/** mulberry32: kill moments that a failing seed reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface StatusJson {
  counts: Record<'pending' | 'submitting' | 'submitted' | 'done' | 'failed' | 'in_doubt' | 'skipped', number>;
  spent: number;
  jobs: { id: string; state: string; request_id: string | null; output: string | null; error: string | null }[];
}
