import { readFile } from 'node:fs/promises';
import { createServiceClient } from '../../src/api/client.js';
import { openManifest } from '../../src/manifest/open.js';
import { DEFAULT_RETRY, simulatorPoll, type PollSchedules, type RetryPolicy, type RunEvent, type RunProgress } from '../../src/runner/context.js';
import type { MicroUsd } from '../../src/money.js';
import type { CostReport, CostReportJob } from '../../src/pricing/report.js';
import { estimate, run, type PlanChoice, type RunFiles, type RunResult } from '../../src/runner/index.js';
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
  /** Default: the manifest's budget. */
  budgetMicro?: MicroUsd | null;
  /** Default 'unlimited'. */
  plan?: PlanChoice;
  /** Default 4. */
  concurrency?: number;
  /** run --retries. Default 2. */
  retryFailed?: number;
  /** The documents' paths as the CLI names them (with the review page); default: beside `outDir`, no page. */
  files?: RunFiles;
  options?: { poll?: PollSchedules; maxResultBytes?: number; retry?: RetryPolicy };
  /** Sees each event as it happens (they are all returned too), with the progress the runner keeps. */
  onEvent?: (event: RunEvent) => void;
  progress?: RunProgress;
}

/**
 * `run` without the CLI, for settings the CLI does not offer (a tiny retry wait, a size limit
 * in bytes, a pace of its own): the runner's entry point, with the real client and ledger
 * (opened as a run opens it). Returns the events it emitted.
 */
export async function runInProcess(input: InProcessRun): Promise<RunEvent[]> {
  return (await runInProcessResult(input)).events;
}

/** `runInProcess`, with what `run` returned (the summary, as `run --json` shows it) beside the events. */
export async function runInProcessResult(input: InProcessRun): Promise<{ events: RunEvent[]; result: RunResult }> {
  const ledger = input.ledger ?? (await openSqliteLedger(input.ledgerPath, { mode: 'read-write' }));
  const client = createServiceClient({ baseUrl: input.baseUrl, token: input.token, clock: input.clock });
  const events: RunEvent[] = [];
  try {
    const result = await run({
      manifest: await openManifest(input.manifest),
      ledger,
      service: { client, baseUrl: input.baseUrl },
      files: input.files ?? {
        db: input.ledgerPath,
        out: input.outDir,
        runJson: `${input.outDir}.run.json`,
        runCsv: `${input.outDir}.run.csv`,
        legacyReport: `${input.outDir}.report.json`,
      },
      plan: input.plan ?? 'unlimited',
      budgetMicro: input.budgetMicro,
      pace: input.pace,
      clock: input.clock,
      select: input.select,
      noWait: input.noWait,
      concurrency: input.concurrency ?? 4,
      retryFailed: input.retryFailed,
      poll: { schedules: input.options?.poll ?? simulatorPoll() },
      retry: input.options?.retry ?? { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 50 },
      maxResultBytes: input.options?.maxResultBytes ?? 1e7,
      onEvent: (event) => {
        events.push(event);
        input.onEvent?.(event);
      },
      progress: input.progress,
    });
    return { events, result };
  } finally {
    await client.close();
    if (input.ledger === undefined) await ledger.close();
  }
}

export type InProcessEstimate = Pick<InProcessRun, 'manifest' | 'ledgerPath' | 'baseUrl' | 'token' | 'budgetMicro' | 'select'>;

/** `estimate` without the CLI: the runner's entry point with the real client and ledger (opened as the CLI's estimate opens it). */
export async function estimateInProcess(input: InProcessEstimate): Promise<{ report: CostReport; jobs: CostReportJob[]; events: RunEvent[] }> {
  const ledger = await openSqliteLedger(input.ledgerPath, { mode: 'read-write' });
  const client = createServiceClient({ baseUrl: input.baseUrl, token: input.token });
  const events: RunEvent[] = [];
  try {
    const { report, jobs } = await estimate({
      manifest: await openManifest(input.manifest),
      ledger,
      service: { client, baseUrl: input.baseUrl },
      budgetMicro: input.budgetMicro,
      plan: 'unlimited',
      select: input.select,
      onEvent: (event) => events.push(event),
    });
    const all: CostReportJob[] = [];
    for await (const job of jobs()) all.push(job);
    return { report, jobs: all, events };
  } finally {
    await client.close();
    await ledger.close();
  }
}

/** `<name>.run.json` of an in-process run into `outDir`: the document `run --json` prints. */
export async function readRunJson<T>(outDir: string): Promise<T> {
  return JSON.parse(await readFile(`${outDir}.run.json`, 'utf8')) as T;
}
