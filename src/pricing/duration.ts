import type { JobType } from '../jobs/types.js';
import { JOB_KINDS, type ClassLimit } from '../jobs/index.js';
import { paceClassOf, type PlanLimits } from '../jobs/plans.js';

const MINUTE_MS = 60_000;
const DAY_MS = 1440 * MINUTE_MS;

/**
 * How long the pace alone lets the run take: submits of each type are paced separately and
 * status polls share one pace, so the run takes the longest of them. Generation time is not
 * counted (the service does not state it), so this is a lower bound on a loaded service.
 * `statusPolls` defaults to one a job to send; a run under way adds one for each job already
 * sent and not yet finished (the time left on its progress line).
 */
export function estimateDuration(
  jobsToSend: Partial<Record<JobType, number>>,
  plan: PlanLimits,
  planName: string,
  statusPolls?: number,
) {
  const totalJobs = Object.values(jobsToSend).reduce((sum, n) => sum + n, 0);
  const polls = statusPolls ?? totalJobs;
  // Kinds that share a budget (the Whisper kinds) are paced as one class.
  const perClass = new Map<JobType, number>();
  for (const { type } of JOB_KINDS) {
    const cls = paceClassOf(type);
    perClass.set(cls, (perClass.get(cls) ?? 0) + (jobsToSend[type] ?? 0));
  }
  const submits = [...perClass]
    .map(([cls, n]) => classDuration(cls, n, plan[`submit:${cls}`]))
    .filter((c) => c.requests > 0);
  const byClass = [...submits, classDuration('status', polls, plan.status)].filter((c) => c.requests > 0);
  const polling = slowestOf(byClass, planName);
  const hooked = slowestOf(submits, planName);
  return {
    // durationMs and its text, e.g. "about 3 days 20 minutes (Basic: <kind> 300/day)".
    ...polling,
    byClass,
    /** Every job needs at least one status poll to learn its result URL. */
    statusPollsMin: polls,
    /** Status calls the plan allows a day; undefined when it states no daily cap. */
    statusPerDay: plan.status.perDay,
    // The same run followed by the service's webhooks (run --webhook-url): a job whose deliveries
    // arrive needs no status call, so only the submits pace it. Jobs not heard from are still polled.
    withWebhooks: { ...hooked, statusCallsMin: 0 },
  };
}

type ClassDuration = ReturnType<typeof classDuration>;

/** The run takes as long as its slowest class; its text names the limit that sets it. */
function slowestOf(classes: readonly ClassDuration[], planName: string): { durationMs: number; text: string } {
  const slowest = classes.reduce<ClassDuration | undefined>((max, c) => (max === undefined || c.durationMs > max.durationMs ? c : max), undefined);
  if (slowest === undefined) return { durationMs: 0, text: 'nothing to send' };
  // No client-side pace (--plan unlimited): the service and the network set the speed.
  if (planName === 'unlimited') return { durationMs: 0, text: 'not paced (--plan unlimited): as fast as the service answers' };
  const what = slowest.what === 'status' ? 'status polls' : slowest.what;
  return {
    durationMs: slowest.durationMs,
    // "about under a minute" reads wrong: a bound needs no "about".
    text: `${slowest.durationMs < MINUTE_MS ? '' : 'about '}${formatDuration(slowest.durationMs)} (${titleCase(planName)}: ${what} ${slowest.limitText})`,
  };
}

/**
 * Within a day the per-minute cap paces; past the daily cap the rest waits for the 00:00 UTC
 * reset. The start time of day is unknown, so each full daily quota counts as one day.
 */
function classDuration(what: JobType | 'status', requests: number, limit: ClassLimit) {
  const perDay = limit.perDay;
  // `limitText`: the limit that sets the figure, e.g. `300/day` or `5/min`.
  if (perDay === undefined || requests <= perDay || perDay >= limit.perMinute * 1440) {
    return { what, requests, durationMs: (requests / limit.perMinute) * MINUTE_MS, limitText: `${limit.perMinute}/min` };
  }
  const fullDays = Math.ceil(requests / perDay) - 1;
  const lastDayRequests = requests - fullDays * perDay;
  const durationMs = fullDays * DAY_MS + (lastDayRequests / limit.perMinute) * MINUTE_MS;
  return { what, requests, durationMs, limitText: `${perDay}/day` };
}

/** The two largest non-zero units: "3 days 20 minutes", "2 hours 5 minutes", "4 minutes". */
export function formatDuration(durationMs: number): string {
  if (durationMs < MINUTE_MS) return 'under a minute';
  const totalMinutes = Math.round(durationMs / MINUTE_MS);
  const parts: [number, string][] = [
    [Math.floor(totalMinutes / 1440), 'day'],
    [Math.floor((totalMinutes % 1440) / 60), 'hour'],
    [totalMinutes % 60, 'minute'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .slice(0, 2)
    .map(([n, unit]) => `${n} ${unit}${n === 1 ? '' : 's'}`)
    .join(' ');
}

function titleCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
