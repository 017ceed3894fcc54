/**
 * What a person watching an estimate or a run sees on stderr. While the manifest is checked and
 * priced, a line at intervals saying how far it is. Once the run submits, on a TTY a live block
 * (log-update redraws it in place without flicker and keeps the lines printed above it);
 * elsewhere one plain line at intervals, with the local time, so a log file stays readable.
 * Notable events are printed as lines in both cases, with the time.
 */
import type { Clock } from '../clock.js';
import type { PlanLimits } from '../jobs/plans.js';
import { SETTLED_STATES } from '../jobs/states.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { formatCount } from '../report/text.js';
import type { PricingProgress, RunEvent, RunProgress } from '../runner/index.js';
import { TimeLeft, type Pause, type RateView } from './eta.js';
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
export function pricingLine(progress: PricingProgress, plan: PlanPace, pause: Pause | undefined, nowMs: number, timeZone?: string): string {
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
  return (
    `${formatCount(c['done'] ?? 0)}/${formatCount(view.total)} done · ${formatCount((c['submitted'] ?? 0) + (c['submitting'] ?? 0))} running · ` +
    `${formatCount(c['pending'] ?? 0)} pending · ${formatCount(c['failed'] ?? 0)} failed · ${formatCount(c['in_doubt'] ?? 0)} in doubt · ` +
    `${formatCount(c['skipped'] ?? 0)} skipped · spent ${formatUsd(view.snap.spentMicro)}${budget} · ${formatRate(view.rate.perS, view.rate.what)}${paused}${eta}`
  );
}

/** Jobs (or submits) a second, or a minute when fewer than one a second (Basic's pace reads `4.8 jobs/min`). */
export function formatRate(perS: number, what: RateView['what'] = 'jobs'): string {
  const rate = Math.max(0, perS);
  return rate >= 1 || rate === 0 ? `${rate.toFixed(1)} ${what}/s` : `${(rate * 60).toFixed(1)} ${what}/min`;
}
