import { escapeControlChars } from '../control-chars.js';
import type { PacedClass } from '../jobs/plans.js';
import type { RunEvent } from '../runner/context.js';
import { stamp, untilText } from './clock.js';
import { logLine } from './output.js';

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
