import { SETTLED_STATES } from '../jobs/states.js';
import type { createLogUpdate } from 'log-update';
import type { Clock } from '../clock.js';
import type { PlanLimits } from '../jobs/plans.js';
import type { RunEvent, RunProgress } from '../runner/context.js';
import { formatCount } from '../report/text.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { formatDuration, stamp } from './clock.js';
import { TimeLeft, type Pause, type RateView } from './eta.js';
import { describeEvent, pauseText } from './event-text.js';
import { logLine } from './output.js';

export interface ProgressSnapshot {
  counts: Record<string, number>;
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
}

export interface Progress {
  onEvent(event: RunEvent): void;
  /** Draws the last figures, read from the ledger once more. */
  stop(): Promise<void>;
}

/**
 * What a person watching the run sees on stderr. On a TTY a live block (log-update redraws it
 * in place without flicker and keeps the lines printed above it); elsewhere one plain line at
 * intervals, with the local time, so a log file stays readable. Notable events are printed as
 * lines in both cases, with the time.
 */
export type LiveRenderer = typeof createLogUpdate;

/** log-update is loaded only for a terminal: a log file or a pipe never needs its 13 MB. */
export async function loadLiveRenderer(tty: boolean): Promise<LiveRenderer | undefined> {
  return tty ? (await import('log-update')).createLogUpdate : undefined;
}

export interface ProgressOptions {
  /** Read from the ledger at each redraw; `initial` is what it said when the run started. */
  snapshot: () => Promise<ProgressSnapshot>;
  initial: ProgressSnapshot;
  total: number;
  /** Redraws in place on a terminal; undefined: plain lines at intervals. */
  live: LiveRenderer | undefined;
  /** The pace the run keeps: the time left is judged by it. */
  plan: { limits: PlanLimits; name: string };
  /** Kept current by the runner (the submits still to make). */
  run: RunProgress;
  /** false under --no-wait: the run ends with its last submit. */
  following: boolean;
  clock: Clock;
  intervalMs?: number;
}

export function startProgress(options: ProgressOptions): Progress {
  const live = options.live?.(process.stderr);
  const { clock } = options;
  const time = new TimeLeft(options.plan, options.run, clock, options.following);
  const stamped = (line: string): string => stamp(line, clock.nowMs());
  let latest = options.initial;
  let reading: Promise<void> | undefined;
  // One read at a time; a read that fails (the ledger is the run's to report on) keeps the last figures.
  const refresh = (): Promise<void> =>
    (reading ??= options
      .snapshot()
      .then((snap) => void (latest = snap), () => undefined)
      .finally(() => (reading = undefined)));
  const render = (): string => {
    const nowMs = clock.nowMs();
    const left = options.total - settledCount(latest.counts);
    return progressLine({ snap: latest, total: options.total, nowMs, ...time.view(nowMs, left) });
  };
  const draw = (): void => (live ? live(render()) : logLine(stamped(render())));
  let stopped = false;
  const timer = setInterval(() => void refresh().then(() => stopped || draw()), options.intervalMs ?? (live ? 200 : 10_000));
  timer.unref();
  const print = (line: string): void => {
    live?.clear();
    logLine(stamped(line));
    live?.(render());
  };
  return {
    onEvent: (event) => {
      time.onEvent(event);
      const line = describeEvent(event, clock.nowMs());
      if (line !== undefined) print(line);
    },
    stop: async () => {
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

function settledCount(counts: Record<string, number>): number {
  return [...SETTLED_STATES].reduce((n, s) => n + (counts[s] ?? 0), 0);
}

export interface ProgressView {
  snap: ProgressSnapshot;
  total: number;
  nowMs: number;
  rate: RateView;
  etaMs: number | undefined;
  pause: Pause | undefined;
  timeZone?: string;
}

/** `1,204/5,000 done · … · 0.4 jobs/s · paused by the daily limit until 01:00 (in 3h42m) · ETA 1d02h` */
export function progressLine(view: ProgressView): string {
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
