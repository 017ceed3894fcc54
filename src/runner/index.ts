/**
 * The runner's entry points, for the CLI, the benchmarks and the tests alike: `check` checks a
 * manifest, `estimate` prices it and reports, `run` sends, follows and collects it. Each takes what
 * the composition root owns (the manifest, an open ledger, the service client), options with their
 * defaults applied here, one AbortSignal, and a sink for events; none prints or exits.
 */
import { systemClock, type Clock } from '../clock.js';
import { checkJobs } from '../manifest/read.js';
import type { Manifest } from '../manifest/open.js';
import { usdToMicro, type MicroUsd } from '../money.js';
import { buildCostReport } from '../pricing/report.js';
import { COST_JOB_LINES } from '../report/cost-report.js';
import { errorJson } from '../report/documents.js';
import type { StatusSummary } from '../report/status.js';
import type { GraphLedger, IngestLedger, Ledger, ListingLedger, PlanLedger, SendSelection } from '../store/index.js';
import { createRunDeps, createRunProgress, DEFAULT_RETRY, pollEvery, RUN_DEFAULTS } from './context.js';
import { servicePoll, simulatorPoll, type InFlight, type PollSchedules, type PricingProgress } from './context.js';
import type { RunEvent, RunOptions, RunProgress } from './context.js';
import { Downstream } from './downstream.js';
import { pollingCompletion } from './follow.js';
import { SplitJoins, unjoinedSplits, type UnjoinedSplit } from './join-splits.js';
import { refuseLostLedger, TRACES_OF_THIS_LEDGER } from './lost-ledger.js';
import { limitsOf, paceFor, type Pace, type PacedClass, type PlanChoice } from './pace.js';
import type { RunPlan } from './plan.js';
import { loadCatalogue, prepareSend, readBalanceUsd, type CatalogueCache, type ServiceDeps } from './prepare.js';
import { ensureWritableFolder } from './report-file.js';
import { costJobOf, estimateJobs, stepFigures, summarize, writeReviewPage, writeRunReports, type RunFiles } from './reports.js';
import { fitInOrder, sendManifest, type RunOutcome } from './run.js';
import { pickedCounts, picks, type Selection } from './selection.js';
import { openWebhookCompletion, type WebhookSettings } from './webhooks.js';

export type { PlanChoice, PricingProgress, RunEvent, RunFiles, RunOutcome, RunPlan, RunProgress, Selection, StatusSummary, UnjoinedSplit, WebhookSettings };
export { createRunProgress, limitsOf, refuseLostLedger, writeReviewPage };
export const { retryFailed: DEFAULT_RETRY_FAILED, maxResultBytes: DEFAULT_MAX_RESULT_BYTES } = RUN_DEFAULTS;

type ServiceAccess = Pick<ServiceDeps, 'client' | 'baseUrl'>;

export interface EstimateRequest extends Partial<Pick<RunOptions, 'concurrency'>> {
  manifest: Manifest;
  /** An estimate records and prices the jobs; it changes no job's state. */
  ledger: IngestLedger & ListingLedger & PlanLedger & GraphLedger;
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
  /** --only, --tag and --redo; one that matches no job, or a redo of a job not done, is refused (UsageError). */
  select?: Selection | undefined;
  /** Where the time of day is read from (pauses, daily resets, the page's date). Default the system's. */
  clock?: Clock | undefined;
}

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

/**
 * Checks the manifest against the catalogue, records its jobs in the ledger, prices what may be
 * sent (cached prices cost no call) and reports: the first jobs for a person to read, and every
 * job in manifest order, a window at a time, for the JSON and CSV reports. Sends nothing.
 */
export async function estimate(request: EstimateRequest) {
  const { ledger, service, progress } = request;
  const { emit, pace, budgetMicro } = commonParts(request);
  const send: SendSelection = { resubmitInDoubt: false, ...request.select };
  const stop = request.signal ?? new AbortController().signal;
  const deps = { ...service, ledger, pace, retry: DEFAULT_RETRY, stop, emit, progress };
  const { pricing } = await prepareSend(request.manifest, deps, send, false);
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
    concurrency: request.concurrency ?? RUN_DEFAULTS.concurrency,
  });
  const firstJobs = (await ledger.readJobs({ scope: 'manifest', flagSend: send, limit: COST_JOB_LINES })).map(costJobOf);
  const steps = await stepFigures(ledger, 'manifest');
  return { report: { ...report, steps }, firstJobs, jobs: () => estimateJobs(ledger, send) };
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
  const { ledger, files } = request;
  if ((await nothingSent(ledger)) && (await ledger.getMeta(TRACES_OF_THIS_LEDGER)) === undefined) refuseLostLedger(files);
  const { emit, clock, pace, budgetMicro } = commonParts(request);
  const options: RunOptions = { ...withDefaults(RUN_DEFAULTS, request), budgetMicro, outDir: files.out };
  if (!options.noWait) await ensureWritableFolder(files.out);
  const send: SendSelection = { resubmitInDoubt: options.resubmitInDoubt, ...request.select };
  const userStop = request.signal ?? new AbortController().signal;
  const halt = new AbortController();
  const stop = AbortSignal.any([userStop, halt.signal]);
  const { inFlight, progress } = request;
  const client = request.service.client;
  const deps = createRunDeps({ client, ledger, pace, options, stop, emit, clock, inFlight, progress });
  const joins = new SplitJoins(deps);
  const downstream = new Downstream(joins, (id) => ledger.dependentsReady(id, send));
  const basePoll = pollSchedules(request.poll);
  // Listening before anything is sent: a delivery may come as soon as the first job is taken.
  const completion =
    request.webhooks === undefined
      ? pollingCompletion(deps, downstream, basePoll)
      : await openWebhookCompletion(deps, downstream, request.webhooks, basePoll, !options.noWait);
  let started = false;
  let outcome: RunOutcome | undefined;
  const onExecute = async (plan: RunPlan): Promise<void> => {
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
  };
  try {
    outcome = await sendManifest(request, deps, { completion, joins, downstream }, send, { userStop, halt, onExecute });
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
  const page = { manifest: request.manifest.path, budgetMicro, generatedAt: new Date(clock.nowMs()) };
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
function commonParts(request: EstimateRequest) {
  const emit = request.onEvent ?? (() => undefined);
  const clock = request.clock ?? systemClock;
  const onPause = (what: PacedClass, untilMs: number, reason: string): void => {
    emit({ kind: 'paused', what, untilMs, reason });
  };
  const onResume = (what: PacedClass): void => emit({ kind: 'resumed', what });
  const pace = request.pace ?? paceFor(request.plan ?? 'premium', { onPause, onResume, clock });
  // A cap never grows by rounding: a budget typed finer than a micro-dollar rounds down.
  const { budgetUsd } = request.manifest;
  const manifestBudget = budgetUsd === undefined ? null : usdToMicro(budgetUsd, 'down');
  return { emit, clock, pace, budgetMicro: request.budgetMicro !== undefined ? request.budgetMicro : manifestBudget };
}

/** `defaults`, each replaced by the value `given` has for it, if any. */
function withDefaults<T extends object>(defaults: T, given: { [K in keyof T]?: T[K] | undefined }): T {
  const set = Object.keys(defaults).filter((key) => given[key as keyof T] !== undefined);
  return { ...defaults, ...Object.fromEntries(set.map((key) => [key, given[key as keyof T]])) };
}

function pollSchedules(poll: RunRequest['poll']): PollSchedules {
  if (poll === undefined || poll === 'service') return servicePoll();
  if (poll === 'simulator') return simulatorPoll();
  return 'schedules' in poll ? poll.schedules : pollEvery(poll.firstMs);
}
