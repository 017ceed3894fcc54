import { planLimits, unlimitedPlan, type PlanLimits } from '../jobs/plans.js';
import { Pace, planPace, type PaceOptions } from './pace.js';

/** The account plan to pace for; `unlimited` keeps no client-side pace (429s are still obeyed). */
export type PlanChoice = 'basic' | 'premium' | 'unlimited';

/** The limits a plan keeps (the cost report and the progress line time a batch by them). */
export function limitsOf(plan: PlanChoice): PlanLimits {
  return plan === 'unlimited' ? unlimitedPlan() : planLimits(plan);
}

/** The pace of a plan and the limits it keeps. */
export function paceFor(plan: PlanChoice, options: PaceOptions = {}): { pace: Pace; limits: PlanLimits } {
  const limits = limitsOf(plan);
  if (plan === 'unlimited') return { pace: new Pace({}, options), limits };
  return { pace: new Pace(planPace(limits), options), limits };
}
