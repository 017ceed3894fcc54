/**
 * Times as a person at this machine reads them: the local wall clock (`TZ` is respected), and
 * how long from now. Every function takes the zone explicitly too, so tests fix it.
 */

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
