import type { Clock } from '../clock.js';
import type { PlanLimits } from '../jobs/plans.js';
import type { PricingProgress, RunEvent } from '../runner/index.js';
import { stamp } from './clock.js';
import type { Pause } from './eta.js';
import { pauseText } from './event-text.js';

export interface PricingTicker {
  /** Takes the price class's pauses into account. */
  onEvent(event: RunEvent): void;
  stop(): void;
}

/**
 * While an estimate (or a run before its first submit) checks and prices a manifest, a line on
 * stderr every `intervalMs` saying how far it is and what it waits for: on Basic, the price pace
 * alone makes pricing take minutes, and silence reads as a hang. Nothing when it is quick.
 */
export function startPricingTicker(options: {
  progress: PricingProgress;
  plan: { limits: PlanLimits; name: string };
  print: (line: string) => void;
  clock: Clock;
  intervalMs?: number;
}): PricingTicker {
  let pause: Pause | undefined;
  const timer = setInterval(() => {
    const nowMs = options.clock.nowMs();
    options.print(stamp(pricingLine(options.progress, options.plan, pause, nowMs), nowMs));
  }, options.intervalMs ?? 5_000);
  timer.unref();
  return {
    onEvent: (event) => {
      if (event.kind === 'paused' && event.what === 'price') pause = { untilMs: event.untilMs, reason: event.reason };
    },
    stop: () => clearInterval(timer),
  };
}

/** `pricing: 3/7 price calls answered; waiting for the price pace (Basic: 50/min, 200/day)` */
export function pricingLine(
  progress: PricingProgress,
  plan: { limits: PlanLimits; name: string },
  pause: Pause | undefined,
  nowMs: number,
  timeZone?: string,
): string {
  if (progress.planned === 0) {
    const read = progress.jobsRead === 0 ? '' : ` (${progress.jobsRead.toLocaleString('en-US')} jobs read so far)`;
    return `preparing: checking the manifest with the service before pricing it${read}; no price call yet`;
  }
  const done = `pricing: ${progress.answered}/${progress.planned} price calls answered`;
  if (pause !== undefined && pause.untilMs > nowMs) return `${done}; price calls ${pauseText(pause, nowMs, timeZone)}`;
  if (progress.waitingForPace > 0 && plan.name !== 'unlimited') return `${done}; waiting for the price pace (${paceText(plan)})`;
  const asked = progress.waitingForAnswer;
  if (asked > 0) return `${done}; waiting for the service to answer ${asked === 1 ? '1 call' : `${asked} calls`}`;
  return done;
}

function paceText(plan: { limits: PlanLimits; name: string }): string {
  const { perMinute, perDay } = plan.limits.price;
  const name = plan.name.charAt(0).toUpperCase() + plan.name.slice(1);
  return `${name}: ${perMinute}/min${perDay === undefined ? '' : `, ${perDay}/day`}`;
}
