import { SETTLED_STATES } from '../jobs/states.js';
import type { createLogUpdate } from 'log-update';
import { escapeControlChars } from '../control-chars.js';
import type { RunEvent } from '../runner/context.js';
import { formatUsd, type MicroUsd } from '../money.js';
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
 * intervals, so a log file stays readable. Notable events are printed as lines in both cases.
 */
export type LiveRenderer = typeof createLogUpdate;

/** log-update is loaded only for a terminal: a log file or a pipe never needs its 13 MB. */
export async function loadLiveRenderer(tty: boolean): Promise<LiveRenderer | undefined> {
  return tty ? (await import('log-update')).createLogUpdate : undefined;
}

export function startProgress(options: {
  /** Read from the ledger at each redraw; `initial` is what it said when the run started. */
  snapshot: () => Promise<ProgressSnapshot>;
  initial: ProgressSnapshot;
  total: number;
  /** Redraws in place on a terminal; undefined: plain lines at intervals. */
  live: LiveRenderer | undefined;
  intervalMs?: number;
  quietEvents?: boolean;
}): Progress {
  const startedMs = Date.now();
  const endedAtStart = [...SETTLED_STATES].reduce((n, s) => n + (options.initial.counts[s] ?? 0), 0);
  const live = options.live?.(process.stderr);
  let latest = options.initial;
  let reading: Promise<void> | undefined;
  // One read at a time; a read that fails (the ledger is the run's to report on) keeps the last figures.
  const refresh = (): Promise<void> =>
    (reading ??= options
      .snapshot()
      .then((snap) => void (latest = snap), () => undefined)
      .finally(() => (reading = undefined)));
  const render = (): string => progressLine(latest, options.total, startedMs, endedAtStart);
  const draw = (): void => (live ? live(render()) : logLine(render()));
  let stopped = false;
  const timer = setInterval(() => void refresh().then(() => stopped || draw()), options.intervalMs ?? (live ? 200 : 10_000));
  timer.unref();
  const print = (line: string): void => {
    live?.clear();
    logLine(line);
    live?.(render());
  };
  return {
    onEvent: (event) => {
      const line = describeEvent(event);
      if (line !== undefined && !options.quietEvents) print(line);
    },
    stop: async () => {
      clearInterval(timer);
      stopped = true;
      await refresh();
      if (live) {
        live(render());
        live.done();
      } else {
        logLine(render());
      }
    },
  };
}

export function progressLine(snap: ProgressSnapshot, total: number, startedMs: number, endedAtStart: number): string {
  const c = snap.counts;
  const ended = [...SETTLED_STATES].reduce((n, s) => n + (c[s] ?? 0), 0);
  const elapsedS = Math.max(0.001, (Date.now() - startedMs) / 1000);
  const ratePerS = (ended - endedAtStart) / elapsedS;
  const left = total - ended;
  const eta = ratePerS > 0 && left > 0 ? `, ETA ${formatDuration(left / ratePerS)}` : '';
  const budget = snap.budgetMicro === null ? '' : ` of ${formatUsd(snap.budgetMicro)}`;
  return (
    `${c['done'] ?? 0}/${total} done · ${(c['submitted'] ?? 0) + (c['submitting'] ?? 0)} running · ` +
    `${c['pending'] ?? 0} pending · ${c['failed'] ?? 0} failed · ${c['in_doubt'] ?? 0} in doubt · ` +
    `${c['skipped'] ?? 0} skipped · spent ${formatUsd(snap.spentMicro)}${budget} · ${ratePerS.toFixed(1)} jobs/s${eta}`
  );
}

/** A reason may be the service's text, or a ledger's from an older mediabatch: escaped for the terminal. */
export function describeEvent(event: RunEvent): string | undefined {
  const line = eventLine(event);
  return line === undefined ? undefined : escapeControlChars(line);
}

function eventLine(event: RunEvent): string | undefined {
  switch (event.kind) {
    case 'failed':
      return `failed   ${event.id}: ${event.reason}`;
    case 'in_doubt':
      return `in doubt ${event.id}: ${event.reason} (not sent again automatically)`;
    case 'skipped':
      return `skipped  ${event.id}: ${event.reason}`;
    case 'warning':
      return `warning: ${event.message}`;
    case 'paused':
      return `paused   ${event.what} until ${new Date(event.untilMs).toISOString()}: ${event.reason}`;
    case 'still_running':
      return `waiting  ${event.id} is still running; the next run collects it`;
    case 'webhooks_listening':
      return `webhooks listening on ${event.address} for POSTs to ${event.path}; jobs not heard from are polled`;
    case 'webhook_rejected':
      return `webhook refused (${event.status}): ${event.reason}`;
    case 'webhooks_summary':
      return `webhooks ${event.applied} applied, ${event.duplicates} seen before, ${event.ignored} changing nothing, ${event.rejected} refused`;
    default:
      return undefined;
  }
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
