import { JOB_KINDS, kindOf } from './index.js';
import type { ClassLimit, PlanName } from './kind.js';
import type { JobType } from './types.js';

/** Endpoint classes the service counts apart: each kind's submits, every price call, every status call. */
export type PacedClass = `submit:${JobType}` | 'price' | 'status';

export type PlanLimits = Record<PacedClass, ClassLimit>;

/**
 * Price and status calls are counted across kinds. Premium states no limit for them; they are
 * assumed limited like its generation calls.
 */
const SHARED: Readonly<Record<PlanName, Record<'price' | 'status', ClassLimit>>> = {
  basic: { price: { perMinute: 50, perDay: 200 }, status: { perMinute: 50, perDay: 200 } },
  premium: { price: { perMinute: 300 }, status: { perMinute: 300 } },
};

/** The kind whose budget a kind's submits are counted in: its own, or the one it shares. */
export const paceClassOf = (type: JobType): JobType => kindOf(type).paceClass ?? type;

export const submitClassOf = (type: JobType): `submit:${JobType}` => `submit:${paceClassOf(type)}`;

/** Every class's limits on a plan: each kind's own submit limits and the shared ones. */
export function planLimits(plan: PlanName): PlanLimits {
  const submits = Object.fromEntries(JOB_KINDS.map((kind) => [submitClassOf(kind.type), kind.plans[plan]]));
  return { ...submits, ...SHARED[plan] } as PlanLimits;
}

/** No client-side pace (the simulator, servers without limits); 429s are still obeyed. */
export function unlimitedPlan(): PlanLimits {
  return Object.fromEntries(pacedClasses().map((cls) => [cls, { perMinute: 1_000_000 }])) as PlanLimits;
}

export function pacedClasses(): PacedClass[] {
  return [...new Set(JOB_KINDS.map((kind) => submitClassOf(kind.type))), 'price', 'status'];
}
