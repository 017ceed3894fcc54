import { planLimits, unlimitedPlan, type PlanLimits } from '../jobs/plans.js';
import { Pace, planPace, type PacedClass } from './pace.js';

/** The account plan to pace for; `unlimited` keeps no client-side pace (429s are still obeyed). */
export type PlanChoice = 'basic' | 'premium' | 'unlimited';

/** The pace of a plan and the limits it keeps (the cost report times a batch by them). */
export function paceFor(plan: PlanChoice, onPause?: (cls: PacedClass, untilMs: number, reason: string) => void): { pace: Pace; limits: PlanLimits } {
  if (plan === 'unlimited') return { pace: new Pace({}, { onPause }), limits: unlimitedPlan() };
  const limits = planLimits(plan);
  return { pace: new Pace(planPace(limits), { onPause }), limits };
}
