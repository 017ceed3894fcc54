/**
 * The one retry layer of the tool. p-retry runs the attempts; the waiting is done here, so
 * a wait can honour the service's Retry-After and end the moment the run is aborted.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import { ApiError, NetworkError, RateLimitError, ServerError, submitFailureKind } from './errors.js';

export interface RetryOptions {
  /** 'idempotent' for reads and price calls; 'submit' for generation requests (money rules). */
  kind: 'idempotent' | 'submit';
  /** Retries after the first attempt. */
  retries: number;
  minDelayMs: number;
  /** Cap of the backoff; also the longest Retry-After that is waited here (see withRetries). */
  maxDelayMs: number;
  signal?: AbortSignal | undefined;
  /** Retryable failures that are the caller's to wait for instead (a submit's 429: its lane waits). */
  leaveToCaller?: ((error: ApiError) => boolean) | undefined;
  onRetry?: ((error: ApiError, attempt: number, delayMs: number) => void) | undefined;
}

/** Whether a failure may be tried again for this kind of call. */
function isRetryable(error: unknown, kind: RetryOptions['kind']): error is ApiError {
  if (!(error instanceof ApiError)) return false; // a programming error: retrying cannot help
  if (kind === 'submit') return submitFailureKind(error) === 'not-taken';
  return error instanceof RateLimitError || error instanceof ServerError || error instanceof NetworkError;
}

/** Full-jitter exponential backoff: uniform in [min, min·2^(attempt-1)], capped at max. */
export function backoffDelayMs(attempt: number, minDelayMs: number, maxDelayMs: number, random = Math.random): number {
  const ceiling = Math.min(maxDelayMs, minDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(minDelayMs + random() * Math.max(0, ceiling - minDelayMs));
}

/**
 * Runs `fn` (given the attempt number, from 1) and retries the failures `isRetryable` allows,
 * at most `retries` times, waiting a jittered exponential backoff and never less than the
 * error's `retryAfterMs`. It rejects with the last error when:
 * - the error is not retryable for `kind` (a submit is retried only when provably not taken),
 *   or the retries are used up;
 * - the service asks for a wait longer than `maxDelayMs` (a daily limit, a long Retry-After):
 *   that is for the caller's pacer, which pauses the whole endpoint class, not for one call;
 * It rejects with `signal.reason` when `signal` aborts before the first attempt or while
 * waiting (the wait ends at once). That loses no money truth: a wait follows only a failure
 * that was retryable for `kind`, which for a submit means provably not taken. An abort that
 * fails an attempt in flight surfaces as that attempt's own error (see `requestSent`).
 */
export async function withRetries<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { kind, retries, minDelayMs, maxDelayMs, signal, leaveToCaller, onRetry } = options;
  signal?.throwIfAborted();
  return pRetry(fn, {
    retries,
    // p-retry's own wait is switched off: shouldRetry below waits, Retry-After included.
    minTimeout: 0,
    maxTimeout: 0,
    randomize: false,
    async shouldRetry({ error, attemptNumber }) {
      if (!isRetryable(error, kind) || leaveToCaller?.(error) === true) return false;
      const requestedMs = error.retryAfterMs ?? 0;
      if (requestedMs > maxDelayMs) return false;
      signal?.throwIfAborted();
      const delayMs = Math.max(requestedMs, backoffDelayMs(attemptNumber, minDelayMs, maxDelayMs));
      onRetry?.(error, attemptNumber, delayMs);
      // An abort ends the wait at once; the line below then rejects with its reason.
      await delay(delayMs, undefined, { signal }).catch(() => undefined);
      signal?.throwIfAborted();
      return true;
    },
  });
}
