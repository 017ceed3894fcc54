import type { LimitedClass } from './rate-limit.js';

/**
 * Requests the service allows per endpoint class on each published plan: what the simulator
 * enforces. (The client paces itself by the same figures, kept with each job kind in src/jobs.)
 */
export interface ClassLimit {
  perMinute: number;
  /** Daily cap, reset at 00:00 UTC; undefined when the plan states none. */
  perDay?: number | undefined;
}

export type PlanName = 'basic' | 'premium';

export type PlanLimits = Record<LimitedClass, ClassLimit>;

export const PLANS: Record<PlanName, PlanLimits> = {
  basic: {
    'submit:txt2audio': { perMinute: 5, perDay: 300 },
    'submit:img2video': { perMinute: 1, perDay: 15 },
    'submit:txt2img': { perMinute: 3, perDay: 100 },
    'submit:txt2video': { perMinute: 1, perDay: 15 },
    price: { perMinute: 50, perDay: 200 },
    status: { perMinute: 50, perDay: 200 },
  },
  // Premium states 300/min for generation and nothing for price and status calls; the service's docs say
  // to assume those are limited all the same, so they get the generation figure.
  premium: {
    'submit:txt2audio': { perMinute: 300 },
    'submit:img2video': { perMinute: 300 },
    'submit:txt2img': { perMinute: 300 },
    'submit:txt2video': { perMinute: 300 },
    price: { perMinute: 300 },
    status: { perMinute: 300 },
  },
};
