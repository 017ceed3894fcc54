/**
 * The runner's two entry points, for the CLI, the benchmarks and the tests alike: `estimate`
 * prices a manifest and reports; `run` sends, follows and collects it. Each takes what the
 * composition root owns (the manifest, an open ledger, the service client), options with their
 * defaults applied here, one AbortSignal, and a sink for events; neither prints or exits.
 */
import { systemClock, type Clock } from '../clock.js';
import { checkJobs } from '../manifest/read.js';
import type { Manifest } from '../manifest/open.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import { buildCostReport, type CostReport, type CostReportJob } from '../pricing/report.js';
import { COST_JOB_LINES } from '../report/cost-report.js';
import { errorJson } from '../report/error-json.js';
import type { StatusSummary } from '../report/status.js';
import type { IngestLedger, Ledger, ListingLedger, PlanLedger, SendSelection } from '../store/index.js';
import { pollingCompletion } from './completion.js';
import { createRunDeps, createRunProgress, DEFAULT_RETRY, pollEvery, servicePoll, simulatorPoll } from './context.js';
import type { InFlight, PollSchedules, PricingProgress, RunDeps, RunEvent } from './context.js';
import type { RunOptions, RunProgress } from './context.js';
import { ingestManifest } from './ingest.js';
import { SplitJoins, unjoinedSplits, type UnjoinedSplit } from './join-splits.js';
import { refuseLostLedger, TRACES_OF_THIS_LEDGER } from './lost-ledger.js';
import { limitsOf, paceFor, type Pace, type PaceOptions, type PlanChoice } from './pace.js';
import type { RunPlan } from './plan.js';
import { loadCatalogue, priceLedger, readBalanceUsd, type CatalogueCache, type ServiceDeps } from './prepare.js';
import { costJobOf, ensureWritableFolder, estimateJobs, summarize, writeRunReports, type RunFiles } from './reports.js';
import { writeReviewPage } from './review-page.js';
import { fitInOrder, runManifest, type RunOutcome } from './run.js';
import { checkSelection, pickedCounts, picks, type Selection } from './selection.js';
import { openWebhookCompletion, type WebhookSettings } from './webhooks.js';

export type { PlanChoice, PricingProgress, RunEvent, RunFiles, RunOutcome, RunPlan, RunProgress, Selection, StatusSummary, UnjoinedSplit, WebhookSettings };
export { createRunProgress, limitsOf, refuseLostLedger, writeReviewPage };

/** The service, as the composition root reached it: a client and the base URL it speaks to. */
type ServiceAccess = Pick<ServiceDeps, 'client' | 'baseUrl'>;

export interface EstimateRequest {
  manifest: Manifest;
  /** An estimate records and prices the jobs; it changes no job's state. */
  ledger: IngestLedger & ListingLedger & PlanLedger;
  service: ServiceAccess;
  /** Default: the manifest's budget, or none. */
  budgetMicro?: MicroUsd | null | undefined;
  /** The pace to keep. Default 'premium'. */
  plan?: PlanChoice | undefined;
  /** Stops the work: nothing new starts; requests in flight are answered and recorded. */
  signal?: AbortSignal | undefined;
  onEvent?: ((event: RunEvent) => void) | undefined;
  /** A pace of the caller's own instead of the plan's (benchmarks and tests scale its window down). */
  pace?: Pace | undefined;
  /** Kept current with the price calls (and a run's submits still to send), for a caller that shows progress. */
  progress?: RunProgress | undefined;
  /**
   * --only, --tag and --redo: which jobs to send (or, for an estimate, to count as to send).
   * A pattern or tag that matches no job, or a redo of a job that is not done, is refused (UsageError).
   */
  select?: Selection | undefined;
  /** Where the time of day is read from (pauses, daily resets, the page's date). Default the system's. */
  clock?: Clock | undefined;
  /** Submits in flight at once (for an estimate, the duration it tells). Default 8. */
  concurrency?: number | undefined;
}

export const DEFAULT_CONCURRENCY = 8;
/** Retry passes for jobs that failed at the service, retryable and refunded (run --retries): an unattended run heals by itself. */
export const DEFAULT_RETRY_FAILED = 2;
/** The service's outputs are at most 100 MB; the default leaves a little slack for container overhead. */
export const DEFAULT_MAX_RESULT_BYTES = 110 * 1024 * 1024;

/**
 * Checks every job of a manifest, and with the service (and the ledger that caches its catalogue,
 * if any) its catalogue too, reporting every problem at once (ManifestError). Nothing is recorded:
 * the ids are held in memory, compactly, to find duplicates. Sends nothing.
 */
export async function check(request: {
  manifest: Manifest;
  service?: (ServiceAccess & { ledger?: CatalogueCache | undefined }) | undefined;
}): Promise<{ jobs: number }> {
  const models = request.service === undefined ? undefined : await loadCatalogue(request.service);
  let jobs = 0;
  await checkJobs(request.manifest, models, () => (jobs += 1));
  return { jobs };
}

/** What `estimate` found: the report, and every job of it in manifest order (read from the ledger as asked for). */
export interface EstimateResult {
  report: CostReport;
  /** The first jobs, for a person to read. */
  firstJobs: CostReportJob[];
  /** Every job, a window at a time: for the JSON and CSV reports. */
  jobs(): AsyncIterable<CostReportJob>;
}

/**
 * Checks the manifest against the catalogue, records its jobs in the ledger, prices what may be
 * sent (cached prices cost no call) and reports. Sends nothing.
 */
export async function estimate(request: EstimateRequest): Promise<EstimateResult> {
  const { manifest, ledger, service, progress } = request;
  const { emit, pace, budgetMicro } = commonParts(request);
  const stop = request.signal ?? new AbortController().signal;
  const deps = { ...service, ledger, pace, retry: DEFAULT_RETRY, stop, emit, progress };
  const onProgress = (rows: number): void => {
    if (progress !== undefined) progress.pricing.jobsRead = rows;
  };
  await ingestManifest({ manifest, ledger, models: await loadCatalogue(deps), onProgress });
  const send: SendSelection = { resubmitInDoubt: false, ...request.select };
  await checkSelection(ledger, send);
  const pricing = await priceLedger(send, deps);
  const spentMicro = await ledger.spentMicro();
  const balanceUsd = await readBalanceUsd(deps);
  const planName = request.plan ?? 'premium';
  const report = await buildCostReport({
    lines: await ledger.costRows(send),
    pricing,
    spentMicro,
    budgetMicro,
    fit: (budget) => fitInOrder(ledger, send, spentMicro, budget),
    balanceMicro: usdToMicro(balanceUsd, 'down'),
    plan: limitsOf(planName),
    planName,
    concurrency: request.concurrency ?? DEFAULT_CONCURRENCY,
  });
  const firstJobs = (await ledger.readJobs({ scope: 'manifest', flagSend: send, limit: COST_JOB_LINES })).map(costJobOf);
  return { report, firstJobs, jobs: () => estimateJobs(ledger, send) };
}

export interface RunRequest extends EstimateRequest, Partial<Omit<RunOptions, 'budgetMicro' | 'outDir'>> {
  /** The ledger must be opened for a run (its state changes commit before requests leave) and locked. */
  ledger: Ledger;
  files: RunFiles;
  /** Over budget: send what fits, in manifest order, and skip the rest. */
  partial?: boolean | undefined;
  /**
   * How often running jobs are asked about: the service's own pace (default), the simulator's
   * (jobs end in milliseconds), a first poll after N ms, or a schedule per kind.
   */
  poll?: 'service' | 'simulator' | { firstMs: number } | { schedules: PollSchedules } | undefined;
  /** Counts the submits in flight, for a caller that says what a stop waits for. */
  inFlight?: InFlight | undefined;
  /**
   * Follow jobs by the service's signed webhooks: each submit carries the URL and this run's
   * secret, a receiver listens on `listen` before anything is sent (not under noWait: the next
   * run collects), and polling asks only about jobs not heard from.
   */
  webhooks?: WebhookSettings | undefined;
  /** Called once checks, pricing and the budget passed, after the run's trace is on disk, before the first submit. */
  onStart?: ((start: { plan: RunPlan; total: number }) => Promise<void> | void) | undefined;
}

export interface RunResult {
  /** Undefined when the signal stopped the run before its first submit: nothing was sent. */
  outcome: RunOutcome | undefined;
  /** The manifest's jobs (and any dropped job still to collect), from the ledger at the end. */
  summary: StatusSummary;
  /** With --only/--tag: how many jobs they pick, and how many of those are done (what the exit code judges). */
  picked?: { jobs: number; done: number } | undefined;
  /** Split jobs that a part which failed for good keeps from being joined: `--redo` of those parts sends them alone. */
  unjoined: UnjoinedSplit[];
}

/**
 * Sends, follows and collects a manifest's jobs, every outcome committed to the ledger as it
 * happens; running it again resumes. Refuses a ledger that records no job while an earlier run's
 * traces say requests were sent (exit 4), and a results folder it cannot write. Writes
 * `<name>.run.json`/`.csv` before the first submit (the trace that outlives a lost ledger) and
 * at the end. Rejects with what ends a run early (a refused budget, token, balance, disk).
 */
export async function run(request: RunRequest): Promise<RunResult> {
  const { manifest, ledger, files } = request;
  if ((await nothingSent(ledger)) && (await ledger.getMeta(TRACES_OF_THIS_LEDGER)) === undefined) refuseLostLedger(files);
  const noWait = request.noWait ?? false;
  if (!noWait) await ensureWritableFolder(files.out);
  const { emit, clock, pace, budgetMicro } = commonParts(request);
  const userStop = request.signal ?? new AbortController().signal;
  const halt = new AbortController();
  const deps = createRunDeps({
    client: request.service.client,
    ledger,
    pace,
    options: {
      concurrency: request.concurrency ?? DEFAULT_CONCURRENCY,
      budgetMicro,
      noWait,
      resubmitInDoubt: request.resubmitInDoubt ?? false,
      outDir: files.out,
      retry: request.retry ?? DEFAULT_RETRY,
      maxResultBytes: request.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      retryFailed: request.retryFailed ?? DEFAULT_RETRY_FAILED,
    },
    stop: AbortSignal.any([userStop, halt.signal]),
    emit,
    clock,
    inFlight: request.inFlight,
    progress: request.progress,
  });
  const joins = new SplitJoins(deps);
  const basePoll = pollSchedules(request.poll);
  // Listening before anything is sent: a delivery may come as soon as the first job is taken.
  const completion =
    request.webhooks === undefined
      ? pollingCompletion(deps, joins, basePoll)
      : await openWebhookCompletion(deps, joins, request.webhooks, basePoll, !noWait);
  let started = false;
  let outcome: RunOutcome | undefined;
  try {
    outcome = await runManifest({
      manifest,
      deps,
      completion,
      joins,
      baseUrl: request.service.baseUrl,
      partial: request.partial ?? false,
      select: request.select ?? {},
      userStop,
      halt,
      onExecute: async (plan) => {
        // The trace of sent requests goes down before the first of them: a ledger lost after this
        // point must not let a later run send (and pay for) everything again. The ledger notes
        // first that the trace is its own: killed between the two, the next run trusts this ledger.
        if (plan.send.jobs > 0) {
          await ledger.setMeta(TRACES_OF_THIS_LEDGER, 'yes');
          await writeRunReports(files, ledger, await summarize(ledger, budgetMicro), { finished: false });
        }
        started = true;
        // Jobs the manifest dropped after they were sent are collected too, so they count.
        await request.onStart?.({ plan, total: Object.values(plan.counts).reduce((a, b) => a + b, 0) });
      },
    });
  } catch (error) {
    // A stop while checking, pricing or asking the balance ends the call in flight with an abort
    // error. No submit has started, so nothing was sent: an interruption, not a failure.
    if (!userStop.aborted || started) throw error;
  } finally {
    await completion.close();
    // Every change is in before the summary reads them.
    await ledger.flush();
  }
  const summary = await summarize(ledger, budgetMicro);
  const fatal = outcome?.execute.fatal;
  const error = fatal === undefined ? undefined : errorJson(fatal);
  // The run's documents and its review page from one walk of the ledger.
  const page = { manifest: manifest.path, budgetMicro, generatedAt: new Date(clock.nowMs()) };
  await writeRunReports(files, ledger, summary, { finished: true, error }, page);
  const select = request.select ?? {};
  const picked = picks(select) ? await pickedCounts(ledger, select) : undefined;
  return { outcome, summary, picked, unjoined: await unjoinedSplits(ledger) };
}

/** The ledger records no job that ever left this machine (a new one, or one only estimate wrote). */
async function nothingSent(ledger: ListingLedger & Pick<PlanLedger, 'spentMicro'>): Promise<boolean> {
  const counts = await ledger.countsByState();
  const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
  return counts.pending + counts.skipped === jobs && (await ledger.spentMicro()) === 0;
}

/** What an estimate and a run take alike from their request. */
type CommonParts = Pick<RunDeps, 'emit' | 'clock' | 'pace'> & { budgetMicro: MicroUsd | null };
function commonParts(request: EstimateRequest): CommonParts {
  const emit = request.onEvent ?? (() => undefined);
  const clock = request.clock ?? systemClock;
  const onPause: PaceOptions['onPause'] = (what, untilMs, reason) => emit({ kind: 'paused', what, untilMs, reason });
  const pace = request.pace ?? paceFor(request.plan ?? 'premium', { onPause, clock });
  // A cap never grows by rounding: a budget typed finer than a micro-dollar rounds down.
  const { budgetUsd } = request.manifest;
  const manifestBudget = budgetUsd === undefined ? null : usdToMicro(budgetUsd, 'down');
  return { emit, clock, pace, budgetMicro: request.budgetMicro !== undefined ? request.budgetMicro : manifestBudget };
}

function pollSchedules(poll: RunRequest['poll']): PollSchedules {
  if (poll === undefined || poll === 'service') return servicePoll();
  if (poll === 'simulator') return simulatorPoll();
  return 'schedules' in poll ? poll.schedules : pollEvery(poll.firstMs);
}
