import { createServiceClient } from '../../src/api/client.js';
import { openManifest } from '../../src/manifest/open.js';
import { DEFAULT_RETRY, simulatorPoll, type PollSchedules, type RetryPolicy, type RunEvent } from '../../src/runner/context.js';
import { run } from '../../src/runner/index.js';
import type { Pace } from '../../src/runner/pace.js';
import type { Selection } from '../../src/runner/selection.js';
import { openSqliteLedger, type Ledger } from '../../src/store/index.js';
import type { Clock } from '../../src/clock.js';

export interface InProcessRun {
  manifest: string;
  ledgerPath: string;
  /** The ledger to run on, kept open for the test (a memory one, where the file adds nothing); default: the file at ledgerPath. */
  ledger?: Ledger;
  outDir: string;
  baseUrl: string;
  token: string;
  pace?: Pace;
  /** --only, --tag, --redo. */
  select?: Selection;
  noWait?: boolean;
  /** The run's and the client's clock (default the system's). */
  clock?: Clock;
  options?: { poll?: PollSchedules; maxResultBytes?: number; retry?: RetryPolicy };
}

/**
 * `run` without the CLI, for settings the CLI does not offer (a tiny retry wait, a size limit
 * in bytes, a pace of its own): the runner's entry point, with the real client and ledger
 * (opened as a run opens it). Returns the events it emitted.
 */
export async function runInProcess(input: InProcessRun): Promise<RunEvent[]> {
  const ledger = input.ledger ?? (await openSqliteLedger(input.ledgerPath, { mode: 'read-write' }));
  const client = createServiceClient({ baseUrl: input.baseUrl, token: input.token, clock: input.clock });
  const events: RunEvent[] = [];
  try {
    await run({
      manifest: await openManifest(input.manifest),
      ledger,
      service: { client, baseUrl: input.baseUrl },
      files: {
        db: input.ledgerPath,
        out: input.outDir,
        runJson: `${input.outDir}.run.json`,
        runCsv: `${input.outDir}.run.csv`,
        legacyReport: `${input.outDir}.report.json`,
      },
      plan: 'unlimited',
      pace: input.pace,
      clock: input.clock,
      select: input.select,
      noWait: input.noWait,
      concurrency: 4,
      poll: { schedules: input.options?.poll ?? simulatorPoll() },
      retry: input.options?.retry ?? { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 50 },
      maxResultBytes: input.options?.maxResultBytes ?? 1e7,
      onEvent: (event) => events.push(event),
    });
  } finally {
    await client.close();
    if (input.ledger === undefined) await ledger.close();
  }
  return events;
}
