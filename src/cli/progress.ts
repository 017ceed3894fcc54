/**
 * What a person watching an estimate or a run sees on stderr. While the manifest is checked and
 * priced, a line at intervals saying how far it is. Once the run submits, on a TTY a live block
 * (log-update redraws it in place without flicker and keeps the lines printed above it);
 * elsewhere one plain line at intervals, with the local time, so a log file stays readable.
 * Notable events are printed as lines in both cases, with the time.
 */
import type { Clock } from '../clock.js';
import { paceClassOf, type PacedClass, type PlanLimits } from '../jobs/plans.js';
import { SETTLED_STATES } from '../jobs/states.js';
import type { JobType } from '../jobs/types.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { estimateDuration } from '../pricing/duration.js';
import { formatCount } from '../report/text.js';
import type { PricingProgress, RunEvent, RunProgress } from '../runner/index.js';
import { describeEvent, formatDuration, pauseText, stamp } from './event-text.js';
import { logLine } from './output.js';

type PlanPace = { limits: PlanLimits; name: string };

/**
 * While an estimate (or a run before its first submit) checks and prices a manifest, a line on
 * stderr every `intervalMs` saying how far it is and what it waits for: on Basic, the price pace
 * alone makes pricing take minutes, and silence reads as a hang. Nothing when it is quick.
 * `onEvent` takes the price class's pauses into account.
 */
export function startPricingTicker(options: {
  progress: PricingProgress;
  plan: PlanPace;
  print: (line: string) => void;
  clock: Clock;
  intervalMs?: number;
}): { onEvent(event: RunEvent): void; stop(): void } {
  let pause: Pause | undefined;
  const timer = setInterval(() => {
    const nowMs = options.clock.nowMs();
    options.print(stamp(pricingLine(options.progress, options.plan, pause, nowMs), nowMs));
  }, options.intervalMs ?? 5_000);
  timer.unref();
  return {
    onEvent: (event) => {
      if (event.kind === 'paused' && event.what === 'price') pause = { untilMs: event.untilMs, reason: event.reason };
    },
    stop: () => clearInterval(timer),
  };
}

/** `pricing: 3/7 price calls answered; waiting for the price pace (Basic: 50/min, 200/day)` */
export function pricingLine(
  progress: PricingProgress,
  plan: PlanPace,
  pause: Pause | undefined,
  nowMs: number,
  timeZone?: string,
): string {
  if (progress.planned === 0) {
    const read = progress.jobsRead === 0 ? '' : ` (${progress.jobsRead.toLocaleString('en-US')} jobs read so far)`;
    return `preparing: checking the manifest with the service before pricing it${read}; no price call yet`;
  }
  const done = `pricing: ${progress.answered}/${progress.planned} price calls answered`;
  if (pause !== undefined && pause.untilMs > nowMs) return `${done}; price calls ${pauseText(pause, nowMs, timeZone)}`;
  if (progress.waitingForPace > 0 && plan.name !== 'unlimited') return `${done}; waiting for the price pace (${paceText(plan)})`;
  const asked = progress.waitingForAnswer;
  if (asked > 0) return `${done}; waiting for the service to answer ${asked === 1 ? '1 call' : `${asked} calls`}`;
  return done;
}

function paceText(plan: PlanPace): string {
  const { perMinute, perDay } = plan.limits.price;
  const name = plan.name.charAt(0).toUpperCase() + plan.name.slice(1);
  return `${name}: ${perMinute}/min${perDay === undefined ? '' : `, ${perDay}/day`}`;
}

type ProgressSnapshot = { counts: Record<string, number>; spentMicro: MicroUsd; budgetMicro: MicroUsd | null };

export type Progress = Awaited<ReturnType<typeof startProgress>>;

/**
 * The display from the first submit on. `snapshot` is read from the ledger at each redraw; the
 * time left is judged by the plan's pace and by `run` (the submits still to make, kept current by
 * the runner); `following` is false under --no-wait (the run ends with its last submit).
 * log-update is loaded only for a terminal: a log file or a pipe never needs its 13 MB.
 */
export async function startProgress(options: {
  snapshot: () => Promise<ProgressSnapshot>;
  total: number;
  plan: PlanPace;
  run: RunProgress;
  following: boolean;
  clock: Clock;
}) {
  const tty = process.stderr.isTTY === true;
  const live = tty ? (await import('log-update')).createLogUpdate(process.stderr) : undefined;
  const { clock } = options;
  const time = new TimeLeft(options.plan, options.run, clock, options.following);
  const stamped = (line: string): string => stamp(line, clock.nowMs());
  let latest = await options.snapshot();
  let reading: Promise<void> | undefined;
  // One read at a time; a read that fails (the ledger is the run's to report on) keeps the last figures.
  const refresh = (): Promise<void> =>
    (reading ??= options
      .snapshot()
      .then((snap) => void (latest = snap), () => undefined)
      .finally(() => (reading = undefined)));
  const render = (): string => {
    const nowMs = clock.nowMs();
    const left = options.total - [...SETTLED_STATES].reduce((n, s) => n + (latest.counts[s] ?? 0), 0);
    return progressLine({ snap: latest, total: options.total, nowMs, ...time.view(nowMs, left) });
  };
  const draw = (): void => (live ? live(render()) : logLine(stamped(render())));
  let stopped = false;
  const timer = setInterval(() => void refresh().then(() => stopped || draw()), live ? 200 : 10_000);
  timer.unref();
  return {
    onEvent: (event: RunEvent): void => {
      time.onEvent(event);
      const line = describeEvent(event, clock.nowMs());
      if (line === undefined) return;
      live?.clear();
      logLine(stamped(line));
      live?.(render());
    },
    /** Draws the last figures, read from the ledger once more. */
    stop: async (): Promise<void> => {
      clearInterval(timer);
      stopped = true;
      await refresh();
      if (live) {
        live(render());
        live.done();
      } else {
        logLine(stamped(render()));
      }
    },
  };
}

/** `1,204/5,000 done · … · 0.4 jobs/s · paused by the daily limit until 01:00 (in 3h42m) · ETA 1d02h` */
export function progressLine(view: {
  snap: ProgressSnapshot;
  total: number;
  nowMs: number;
  rate: RateView;
  etaMs: number | undefined;
  pause: Pause | undefined;
  timeZone?: string;
}): string {
  const c = view.snap.counts;
  const budget = view.snap.budgetMicro === null ? '' : ` of ${formatUsd(view.snap.budgetMicro)}`;
  const paused = view.pause === undefined ? '' : ` · ${pauseText(view.pause, view.nowMs, view.timeZone)}`;
  const eta = view.etaMs === undefined ? '' : ` · ETA ${formatDuration(view.etaMs / 1000)}`;
  // Only a pipeline's jobs wait for an input: a manifest without one keeps the line it always had.
  const blocked = (c['blocked'] ?? 0) > 0 ? ` · ${formatCount(c['blocked'] ?? 0)} blocked` : '';
  return (
    `${formatCount(c['done'] ?? 0)}/${formatCount(view.total)} done · ${formatCount((c['submitted'] ?? 0) + (c['submitting'] ?? 0))} running · ` +
    `${formatCount(c['pending'] ?? 0)} pending · ${formatCount(c['failed'] ?? 0)} failed · ${formatCount(c['in_doubt'] ?? 0)} in doubt · ` +
    `${formatCount(c['skipped'] ?? 0)} skipped${blocked} · spent ${formatUsd(view.snap.spentMicro)}${budget} · ` +
    `${formatRate(view.rate.perS, view.rate.what)}${paused}${eta}`
  );
}

/** Jobs (or submits) a second, or a minute when fewer than one a second (Basic's pace reads `4.8 jobs/min`). */
export function formatRate(perS: number, what: RateView['what'] = 'jobs'): string {
  const rate = Math.max(0, perS);
  return rate >= 1 || rate === 0 ? `${rate.toFixed(1)} ${what}/s` : `${(rate * 60).toFixed(1)} ${what}/min`;
}

/**
 * `leftJobs`: jobs not settled yet; `toSend`: of them, the submits this run still has to make, by
 * kind (what each class's pace holds back); `pausedUntil`: per class, the end of its pause under
 * way (nothing of that class moves before it); `seen`: what this run did since its first submit.
 */
export interface EtaInput {
  nowMs: number;
  leftJobs: number;
  toSend: Partial<Record<JobType, number>>;
  plan: PlanPace;
  pausedUntil: Partial<Record<PacedClass, number>>;
  following: boolean;
  seen: { submitted: number; settled: number; elapsedMs: number };
}

/**
 * Jobs settled (or submits made) a second, on what this run gained (never what the ledger's
 * counts did: they go down when in-doubt jobs are sent again), so never below zero.
 */
export function perSecond(gained: number, elapsedMs: number): number {
  return Math.max(0, gained) / Math.max(1, elapsedMs / 1000) || 0;
}

/**
 * How long the rest of the run takes at least, in ms, or undefined while nothing says. Each
 * class is paced on its own, side by side (runner/lanes.ts): a class needs its pause under way,
 * then its submits at its pace (pricing/duration.ts, the arithmetic `estimate` shows); a
 * followed run's last submit is then generated, polled and downloaded, which takes about as long
 * as a job has taken so far (Little's law on what this run saw: jobs out ÷ jobs settled a
 * second); and every job not settled needs a status poll at the shared status pace. The slowest
 * of them sets the time. The rate seen since the first submit, when slower (a service busy
 * generating, or no pace to go by), wins.
 */
export function etaMs(input: EtaInput): number | undefined {
  const { nowMs, toSend, plan, pausedUntil, following, seen } = input;
  const sending = Object.values(toSend).reduce((sum, n) => sum + Math.max(0, n), 0);
  const left = following ? input.leftJobs : sending;
  if (left <= 0) return undefined;
  const pauseMs = (cls: PacedClass): number => Math.max(0, (pausedUntil[cls] ?? 0) - nowMs);
  // Kinds that share a budget are timed together, as one class.
  const byClass = new Map<JobType, Partial<Record<JobType, number>>>();
  for (const [type, n] of Object.entries(toSend) as [JobType, number | undefined][]) {
    if ((n ?? 0) > 0) byClass.set(paceClassOf(type), { ...byClass.get(paceClassOf(type)), [type]: n });
  }
  const classMs = (cls: JobType, counts: Partial<Record<JobType, number>>): number =>
    pauseMs(`submit:${cls}`) + estimateDuration(counts, plan.limits, plan.name, 0).durationMs;
  const classesMs = [...byClass].map(([cls, counts]) => classMs(cls, counts));
  const ratePerS = following ? perSecond(seen.settled, seen.elapsedMs) : perSecond(seen.submitted, seen.elapsedMs);
  const jobMs = following && ratePerS > 0 ? (Math.max(0, seen.submitted - seen.settled) / ratePerS) * 1000 : 0;
  const submitsMs = classesMs.length > 0 ? Math.max(...classesMs) + jobMs : 0;
  const pollsMs = following ? pauseMs('status') + estimateDuration({}, plan.limits, plan.name, input.leftJobs).durationMs : 0;
  const seenMs = ratePerS > 0 ? (left / ratePerS) * 1000 : 0;
  const eta = Math.max(submitsMs, pollsMs, seenMs);
  return eta > 0 ? eta : undefined;
}

/** `reason` reads after "paused by". */
export type Pause = { untilMs: number; reason: string };

/** Events after which a job is settled for this run. */
const SETTLES: ReadonlySet<RunEvent['kind']> = new Set(['done', 'failed', 'in_doubt', 'skipped', 'blocked']);

/** What the progress line shows of the pace: submits a second while the run sends, then jobs settled a second. */
export type RateView = { perS: number; what: 'submits' | 'jobs' };

/**
 * What a run has shown of its pace since it started: the pauses its events announced, the
 * submits it made and the jobs it settled. `view` gives the rate, the pause under way and the
 * ETA at a moment.
 */
export class TimeLeft {
  readonly #pauses = new Map<PacedClass, Pause>();
  #firstSubmitMs: number | undefined;
  #submitted = 0;
  #settled = 0;

  constructor(
    private readonly plan: PlanPace,
    private readonly run: RunProgress,
    private readonly clock: Clock,
    private readonly following: boolean,
  ) {}

  onEvent(event: RunEvent): void {
    if (event.kind === 'paused') this.#pauses.set(event.what, { untilMs: event.untilMs, reason: event.reason });
    if (event.kind === 'submitting') this.#firstSubmitMs ??= this.clock.nowMs();
    if (event.kind === 'submitted') this.#submitted += 1;
    if (SETTLES.has(event.kind)) this.#settled += 1;
  }

  view(nowMs: number, leftJobs: number): { rate: RateView; pause: Pause | undefined; etaMs: number | undefined } {
    const seen = { submitted: this.#submitted, settled: this.#settled, elapsedMs: this.#firstSubmitMs === undefined ? 0 : nowMs - this.#firstSubmitMs };
    const pausedUntil = Object.fromEntries([...this.#pauses].map(([cls, pause]) => [cls, pause.untilMs]));
    const eta = etaMs({ nowMs, leftJobs, toSend: this.run.toSend, plan: this.plan, pausedUntil, following: this.following, seen });
    const sending = Object.values(this.run.toSend).some((n) => (n ?? 0) > 0);
    const rate: RateView = sending
      ? { perS: perSecond(seen.submitted, seen.elapsedMs), what: 'submits' }
      : { perS: perSecond(seen.settled, seen.elapsedMs), what: 'jobs' };
    return { rate, pause: this.#pauseUnderWay(nowMs), etaMs: eta };
  }

  /** Of the pauses still under way, the one that ends last. */
  #pauseUnderWay(nowMs: number): Pause | undefined {
    let latest: Pause | undefined;
    for (const pause of this.#pauses.values()) if (pause.untilMs > nowMs && (latest === undefined || pause.untilMs > latest.untilMs)) latest = pause;
    return latest;
  }
}
