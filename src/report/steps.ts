import { JOB_STATES, type JobState } from '../jobs/states.js';
import type { MicroUsd } from '../money.js';
import { formatCount, type Table } from './text.js';

/** The jobs of one step of a pipeline, what they are priced at, and how many are in each state. */
export interface StepTotals {
  jobs: number;
  totalMicro: MicroUsd;
  counts: Record<JobState, number>;
}

/**
 * A manifest whose jobs take others' results, by step (1: the jobs that take none; else one more
 * than the largest step of their inputs), and how many jobs are priced at an upper bound. A
 * manifest without inputs has none: its reports show no step.
 */
export interface StepFigures {
  byStep: Map<number, StepTotals>;
  upperBounds: number;
}

export function newStepFigures(): StepFigures {
  return { byStep: new Map(), upperBounds: 0 };
}

export function addToSteps(
  figures: StepFigures,
  job: { step: number; state: JobState; priceMicro: MicroUsd | null; upperBound: boolean },
): void {
  let totals = figures.byStep.get(job.step);
  if (totals === undefined) {
    const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
    totals = { jobs: 0, totalMicro: 0, counts };
    figures.byStep.set(job.step, totals);
  }
  totals.jobs += 1;
  totals.totalMicro += job.priceMicro ?? 0;
  totals.counts[job.state] += 1;
  if (job.upperBound) figures.upperBounds += 1;
}

/** The steps in order, as `[step, totals]`. */
export function stepsInOrder(figures: StepFigures): [number, StepTotals][] {
  return [...figures.byStep].sort(([a], [b]) => a - b);
}

/** `step, jobs` and a column for each state some step has a job in, for `status`. */
export function stepCountsTable(figures: StepFigures): Table {
  const steps = stepsInOrder(figures);
  const states = JOB_STATES.filter((state) => steps.some(([, totals]) => totals.counts[state] > 0));
  return {
    headers: ['step', 'jobs', ...states],
    rows: steps.map(([step, t]) => [String(step), formatCount(t.jobs), ...states.map((s) => formatCount(t.counts[s]))]),
    align: ['left', 'right', ...states.map(() => 'right' as const)],
  };
}
