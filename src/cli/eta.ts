import type { JobType } from '../jobs/types.js';
import type { PacedClass, PlanLimits } from '../jobs/plans.js';
import { estimateDuration } from '../pricing/duration.js';
import type { RunEvent, RunProgress } from '../runner/context.js';

export interface EtaInput {
  nowMs: number;
  /** Jobs not settled yet (neither done, failed, in doubt nor skipped). */
  leftJobs: number;
  /** Of them, the submits this run still has to make, by kind: what the submit pace holds back. */
  toSend: Partial<Record<JobType, number>>;
  plan: { limits: PlanLimits; name: string };
  /** The end of the latest pause still under way (0: none). Nothing moves before it. */
  pausedUntilMs: number;
  /** Jobs this run settled so far, and in how long: the rate seen. */
  settledGained: number;
  elapsedMs: number;
}

/**
 * Settled jobs a second, on what this run gained (never what the ledger's counts did: they go
 * down when in-doubt jobs are sent again), so never below zero.
 */
export function settleRatePerS(settledGained: number, elapsedMs: number): number {
  return Math.max(0, settledGained) / Math.max(1, elapsedMs / 1000) || 0;
}

/**
 * How long the rest of the run takes at least, in ms, or undefined while nothing says. The plan's
 * pace bounds it from below (pricing/duration.ts, the arithmetic `estimate` shows), starting once
 * the pause under way ends; the rate seen so far, when slower (a service busy generating), wins.
 * Never shorter than a known pause.
 */
export function etaMs(input: EtaInput): number | undefined {
  if (input.leftJobs <= 0) return undefined;
  const pauseMs = Math.max(0, input.pausedUntilMs - input.nowMs);
  const sending = Object.values(input.toSend).reduce((sum, n) => sum + Math.max(0, n), 0);
  // One status poll at least for each job still to send and each one sent and not finished.
  const polls = Math.max(sending, input.leftJobs);
  const paceMs = estimateDuration(input.toSend, input.plan.limits, input.plan.name, polls).durationMs;
  const rate = settleRatePerS(input.settledGained, input.elapsedMs);
  const seenMs = rate > 0 ? (input.leftJobs / rate) * 1000 : 0;
  const eta = Math.max(pauseMs + paceMs, seenMs);
  return eta > 0 ? eta : undefined;
}

export interface Pause {
  untilMs: number;
  /** Reads after "paused by". */
  reason: string;
}

/** Events after which a job is settled for this run. */
const SETTLES: ReadonlySet<RunEvent['kind']> = new Set(['done', 'failed', 'in_doubt', 'skipped']);

/**
 * What a run has shown of its pace since it started: the pauses its events announced and the
 * jobs it settled. `view` gives the rate, the pause under way and the ETA at a moment.
 */
export class TimeLeft {
  readonly #pauses = new Map<PacedClass, Pause>();
  #settled = 0;

  constructor(
    private readonly plan: { limits: PlanLimits; name: string },
    private readonly run: RunProgress,
    private readonly startedMs: number,
  ) {}

  onEvent(event: RunEvent): void {
    if (event.kind === 'paused') this.#pauses.set(event.what, { untilMs: event.untilMs, reason: event.reason });
    if (SETTLES.has(event.kind)) this.#settled += 1;
  }

  view(nowMs: number, leftJobs: number): { ratePerS: number; pause: Pause | undefined; etaMs: number | undefined } {
    const elapsedMs = nowMs - this.startedMs;
    const pause = this.#pauseUnderWay(nowMs);
    const eta = etaMs({ nowMs, leftJobs, toSend: this.run.toSend, plan: this.plan, pausedUntilMs: pause?.untilMs ?? 0, settledGained: this.#settled, elapsedMs });
    return { ratePerS: settleRatePerS(this.#settled, elapsedMs), pause, etaMs: eta };
  }

  /** Of the pauses still under way, the one that ends last. */
  #pauseUnderWay(nowMs: number): Pause | undefined {
    let latest: Pause | undefined;
    for (const pause of this.#pauses.values()) if (pause.untilMs > nowMs && (latest === undefined || pause.untilMs > latest.untilMs)) latest = pause;
    return latest;
  }
}
