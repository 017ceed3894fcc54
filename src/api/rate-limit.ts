/** Reading the service's rate-limit headers (docs/service.md, "Rate limits"). */
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimitType } from './errors.js';
import type { RateLimitInfo } from './types.js';

const MINUTE_MS = 60_000;

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

const RATE_LIMIT_HEADERS = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  dailyLimit: 'x-ratelimit-daily-limit',
  dailyRemaining: 'x-ratelimit-daily-remaining',
} as const;

/** Every rate-limit header present on a response; absent or malformed ones are left out. */
export function parseRateLimit(headers: IncomingHttpHeaders): RateLimitInfo {
  const info: RateLimitInfo = {};
  for (const [field, name] of Object.entries(RATE_LIMIT_HEADERS)) {
    const raw = headerValue(headers, name)?.trim();
    const value = raw === undefined || raw === '' ? NaN : Number(raw);
    if (Number.isFinite(value)) info[field as keyof RateLimitInfo] = value;
  }
  return info;
}

export function parseLimitType(headers: IncomingHttpHeaders): RateLimitType | undefined {
  const raw = headerValue(headers, 'x-ratelimit-type')?.trim().toLowerCase();
  return raw === 'minute' || raw === 'daily' ? raw : undefined;
}

/** Retry-After as milliseconds: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfterMs(headers: IncomingHttpHeaders, nowMs: number): number | undefined {
  const raw = headerValue(headers, 'retry-after')?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  const dateMs = Date.parse(raw);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}

/** Milliseconds until the next 00:00 UTC, when the daily counters reset. */
function msUntilUtcMidnight(nowMs: number): number {
  const now = new Date(nowMs);
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return next - nowMs;
}

/**
 * How long a 429 asks us to wait: Retry-After when sent, else until the daily reset for a
 * daily window, else one minute (a minute window, or a 429 that does not say which).
 */
export function rateLimitWaitMs(headers: IncomingHttpHeaders, nowMs: number): number {
  const retryAfterMs = parseRetryAfterMs(headers, nowMs);
  if (retryAfterMs !== undefined) return retryAfterMs;
  return parseLimitType(headers) === 'daily' ? msUntilUtcMidnight(nowMs) : MINUTE_MS;
}
