/**
 * The narration's words: times as a person at this machine reads them (the local wall clock,
 * `TZ` respected, and how long from now; every function takes the zone explicitly too, so tests
 * fix it), and the line each notable event of a run prints.
 */
import { escapeControlChars } from '../control-chars.js';
import type { PacedClass } from '../jobs/plans.js';
import type { RunEvent } from '../runner/index.js';
import { logLine } from './output.js';

/** `{ date: '2025-06-03', time: '01:00:00' }` */
function localParts(ms: number, timeZone: string | undefined): { date: string; time: string } {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const part = (type: Intl.DateTimeFormatPartTypes): string => format.formatToParts(ms).find((p) => p.type === type)?.value ?? '';
  return { date: `${part('year')}-${part('month')}-${part('day')}`, time: `${part('hour')}:${part('minute')}:${part('second')}` };
}

/** `14:02:31`: the prefix of progress lines written where no one watches them live. */
export function clockTime(ms: number, timeZone?: string): string {
  return localParts(ms, timeZone).time;
}

/** `[14:02:31] line`: a line of a run's narration, as it reads in a log kept from stderr. */
export function stamp(line: string, nowMs: number, timeZone?: string): string {
  return `[${clockTime(nowMs, timeZone)}] ${line}`;
}

/**
 * When a wait ends, and how long until then: `01:00 (in 3h42m)`, with the date when it is not
 * today (`2025-06-04 01:00 (in 1d03h)`) and the seconds when the minute is not whole.
 */
export function untilText(untilMs: number, nowMs: number, timeZone?: string): string {
  // Rounded up to the second: a wait is never said to end before it does.
  const until = localParts(Math.ceil(untilMs / 1000) * 1000, timeZone);
  const today = localParts(nowMs, timeZone).date;
  const time = until.time.endsWith(':00') ? until.time.slice(0, 5) : until.time;
  return `${until.date === today ? '' : `${until.date} `}${time} (in ${formatDuration((untilMs - nowMs) / 1000)})`;
}

/**
 * A duration for people, in its two largest units, rounded up (so a wait or an ETA is never
 * shown shorter than it is): `45s`, `3m05s`, `3h42m`, `2d03h`.
 */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad2(s % 60)}s`;
  const minutes = Math.ceil(s / 60);
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)}h${pad2(minutes % 60)}m`;
  const hours = Math.ceil(minutes / 60);
  return `${Math.floor(hours / 24)}d${pad2(hours % 24)}h`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** `submit:<kind>` → `<kind> submits`, `status` → `status calls`. */
export function describeClass(cls: PacedClass): string {
  return cls.startsWith('submit:') ? `${cls.slice('submit:'.length)} submits` : `${cls} calls`;
}

/** `paused by the daily limit until 01:00 (in 3h42m)`: local time, and how long from now. */
export function pauseText(pause: { untilMs: number; reason: string }, nowMs: number, timeZone?: string): string {
  return `paused by ${pause.reason} until ${untilText(pause.untilMs, nowMs, timeZone)}`;
}

/**
 * The line a person sees for an event, or undefined for the routine ones. A reason may be the
 * service's text, or a ledger's from an older mediabatch: escaped for the terminal.
 */
export function describeEvent(event: RunEvent, nowMs: number, timeZone?: string): string | undefined {
  const line = eventLine(event, nowMs, timeZone);
  return line === undefined ? undefined : escapeControlChars(line);
}

/** An event's line on stderr with the time, for output that is not a live display. */
export function printEvent(event: RunEvent, nowMs: number): void {
  const line = describeEvent(event, nowMs);
  if (line !== undefined) logLine(stamp(line, nowMs));
}

function eventLine(event: RunEvent, nowMs: number, timeZone: string | undefined): string | undefined {
  switch (event.kind) {
    case 'failed':
      return `failed   ${event.id}: ${event.reason}`;
    case 'in_doubt':
      return `in doubt ${event.id}: ${event.reason} (not sent again automatically)`;
    case 'skipped':
      return `skipped  ${event.id}: ${event.reason}`;
    case 'blocked':
      return `blocked  ${event.id}: ${event.reason}`;
    case 'warning':
      return `warning: ${event.message}`;
    case 'joined':
      return `joined   ${event.id}: ${event.parts} parts into ${event.path}`;
    case 'paused':
      return `paused   ${describeClass(event.what)} by ${event.reason} until ${untilText(event.untilMs, nowMs, timeZone)}`;
    case 'still_running':
      return `waiting  ${event.id} is still running; the next run collects it`;
    case 'retry_pass':
      return `retrying ${event.jobs.toLocaleString('en-US')} job(s) that failed at the service (retryable, refunded): pass ${event.pass} of ${event.passes} (--retries)`;
    case 'left_out':
      return `${leftOutText(event.count, event.skipped)}: ${event.reason}`;
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

/** Jobs --partial left out: those now skipped, and those that stay as they were (as status counts them). */
function leftOutText(count: number, skipped: number): string {
  const kept = count - skipped;
  const parts = [];
  if (skipped > 0 || kept === 0) parts.push(`skipped  ${skipped.toLocaleString('en-US')} job(s)`);
  if (kept > 0) parts.push(`not sent ${kept.toLocaleString('en-US')} job(s) that stay done, failed or in doubt`);
  return parts.join('; ');
}
