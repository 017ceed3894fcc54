import type { Clock } from '../clock.js';
import type { JobType } from '../jobs/types.js';
import type { PacedClass, PlanLimits } from '../jobs/plans.js';
import { estimateDuration } from '../pricing/duration.js';
import type { RunEvent, RunProgress } from '../runner/context.js';

export interface EtaInput {
  nowMs: number;
  /** Jobs not settled yet (neither done, failed, in doubt nor skipped). */
  leftJobs: number;
  /** Of them, the submits this run still has to make, by kind: what each class's pace holds back. */
  toSend: Partial<Record<JobType, number>>;
  plan: { limits: PlanLimits; name: string };
  /** Per class, the end of its pause under way: nothing of that class moves before it. */
  pausedUntil: Partial<Record<PacedClass, number>>;
  /** false under --no-wait: the run ends with its last submit; nothing is polled or waited for. */
  following: boolean;
  /** What this run did since its first submit, and in how long: the rates seen. */
  seen: RunRates;
}

export interface RunRates {
  submitted: number;
  settled: number;
  /** Since the first submit of this run (0 before it). */
  elapsedMs: number;
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
  const classesMs = Object.entries(toSend)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([type, n]) => pauseMs(`submit:${type as JobType}`) + estimateDuration({ [type]: n }, plan.limits, plan.name, 0).durationMs);
  const ratePerS = following ? perSecond(seen.settled, seen.elapsedMs) : perSecond(seen.submitted, seen.elapsedMs);
  const jobMs = following && ratePerS > 0 ? (Math.max(0, seen.submitted - seen.settled) / ratePerS) * 1000 : 0;
  const submitsMs = classesMs.length > 0 ? Math.max(...classesMs) + jobMs : 0;
  const pollsMs = following ? pauseMs('status') + estimateDuration({}, plan.limits, plan.name, input.leftJobs).durationMs : 0;
  const seenMs = ratePerS > 0 ? (left / ratePerS) * 1000 : 0;
  const eta = Math.max(submitsMs, pollsMs, seenMs);
  return eta > 0 ? eta : undefined;
}

export interface Pause {
  untilMs: number;
  /** Reads after "paused by". */
  reason: string;
}

/** Events after which a job is settled for this run. */
const SETTLES: ReadonlySet<RunEvent['kind']> = new Set(['done', 'failed', 'in_doubt', 'skipped']);

/** What the progress line shows of the pace: submits a second while the run sends, then jobs settled a second. */
export interface RateView {
  perS: number;
  what: 'submits' | 'jobs';
}

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
    private readonly plan: { limits: PlanLimits; name: string },
    private readonly run: RunProgress,
    private readonly clock: Clock,
    /** false under --no-wait. */
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
