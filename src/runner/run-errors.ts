import { RateLimitError } from '../api/errors.js';
import type { RetryOptions } from '../api/retry.js';
import { ExitCode, MediabatchError } from '../errors.js';
import type { RetryPolicy, RunDeps } from './context.js';
import type { Pace, PacedClass } from './pace.js';

/** Thrown inside a submit when the run stops between two attempts: the job was provably not taken. */
export class SubmitAbandoned extends Error {
  constructor(reason: string) {
    super(`not sent: ${reason}`);
    this.name = 'SubmitAbandoned';
  }
}

/** An error that ends the whole run (bad token, balance, disk full); it keeps the original as cause. */
export class FatalRunError extends MediabatchError {
  constructor(cause: unknown) {
    const inner = cause instanceof MediabatchError ? cause : undefined;
    super(inner?.message ?? describeError(cause), {
      code: inner?.code ?? 'E_FATAL',
      exitCode: inner?.exitCode ?? ExitCode.auth,
      cause,
    });
  }
}

/** Budget refusal before anything is sent (exit 3). */
export class BudgetError extends MediabatchError {
  constructor(message: string) {
    super(message, { code: 'E_BUDGET', exitCode: ExitCode.budget });
  }
}

/** One line for a ledger's last_error or a progress message; never includes a token. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

/**
 * The retry layer's options for an idempotent call, each retry told as an event; with `cls`, a
 * 429 pauses that whole class of requests.
 */
export function idempotentRetries(
  deps: { retry: RetryPolicy; stop?: AbortSignal | undefined; emit: RunDeps['emit']; pace?: Pace | undefined },
  what: string,
  cls?: PacedClass,
): RetryOptions {
  return {
    kind: 'idempotent',
    ...deps.retry,
    signal: deps.stop,
    onRetry: (error, attempt, delayMs) => {
      if (cls !== undefined && error instanceof RateLimitError) deps.pace?.rateLimited(cls, error);
      deps.emit({ kind: 'retry', what, attempt, delayMs, reason: describeError(error) });
    },
  };
}
