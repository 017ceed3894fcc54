import { SIM_KINDS } from './kinds/index.js';
import type { LimitedClass } from './rate-limit.js';

/**
 * Requests the service allows per endpoint class on each published plan: what the simulator
 * enforces: each kind's submits (its file in kinds/), price calls, status calls. (The client paces
 * itself by the same figures, kept with each job kind in src/jobs.)
 */
export interface ClassLimit {
  perMinute: number;
  /** Daily cap, reset at 00:00 UTC; undefined when the plan states none. */
  perDay?: number | undefined;
}

export type PlanName = 'basic' | 'premium';

export type PlanLimits = Record<LimitedClass, ClassLimit>;

function submitLimits(plan: PlanName): Partial<PlanLimits> {
  return Object.fromEntries(SIM_KINDS.map((kind) => [`submit:${kind.type}`, kind.plans[plan]]));
}

export const PLANS: Record<PlanName, PlanLimits> = {
  basic: { ...submitLimits('basic'), price: { perMinute: 50, perDay: 200 }, status: { perMinute: 50, perDay: 200 } } as PlanLimits,
  // Premium states 300/min for generation and nothing for price and status calls; the service's docs say
  // to assume those are limited all the same, so they get the generation figure.
  premium: { ...submitLimits('premium'), price: { perMinute: 300 }, status: { perMinute: 300 } } as PlanLimits,
};
