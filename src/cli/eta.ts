import type { JobType } from '../jobs/types.js';
import type { PlanLimits } from '../jobs/plans.js';
import { estimateDuration } from '../pricing/duration.js';

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
