/**
 * Turning what came back (an HTTP status, its headers and body, or a transport failure) into one
 * typed ApiError, and reading the service's rate-limit headers (docs/service.md, "Rate limits").
 * Parsing here never throws: gateways answer 5xx with HTML, and a crash while describing an
 * error would hide the error that matters.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { escapeControlChars } from '../control-chars.js';
import {
  ApiError,
  AuthError,
  ClientError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnreachableError,
  ValidationError,
  type ApiErrorDetails,
  type RateLimitType,
  type TimeoutPhase,
} from './errors.js';

const SNIPPET_CHARS = 160;

export type Endpoint = Pick<ApiErrorDetails, 'method' | 'path'>;

/** One readable line: whitespace runs (line breaks too) become a space, other controls escapes. */
function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return escapeControlChars(flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS - 1)}…` : flat);
}

/**
 * Blanks out `secrets` (the API token, and a webhook secret the request carried). A proxy or a
 * hostile server may echo the request in its error text; whatever it says ends up in messages,
 * logs and the ledger, so the secrets must be gone from it before anything is shortened (a cut
 * could keep part of one).
 */
function redactor(secrets: readonly string[]): (text: string) => string {
  const present = secrets.filter((s) => s !== '');
  return (text) => present.reduce((redacted, s) => redacted.split(s).join('[redacted]'), text);
}

/** Field errors are kept whole (not shortened), so their control characters are escaped here. */
function toFieldErrors(raw: unknown, clean: (text: string) => string): Record<string, string[]> {
  const fieldErrors: Record<string, string[]> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return fieldErrors;
  for (const [field, value] of Object.entries(raw)) {
    const list = Array.isArray(value) ? value : [value];
    fieldErrors[clean(field)] = list.map((item) => clean(typeof item === 'string' ? item : JSON.stringify(item)));
  }
  return fieldErrors;
}

/** Reads a Laravel-style error body `{message, errors}`; anything else becomes a text snippet. */
function parseErrorBody(text: string, redact: (text: string) => string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // HTML from a gateway, or plain text: keep only what a human can read of it.
    const readable = text.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ');
    return { fieldErrors: {}, snippet: shorten(redact(readable)) };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { fieldErrors: {}, snippet: shorten(redact(text)) };
  }
  const record = parsed as Record<string, unknown>;
  const message = typeof record['message'] === 'string' ? shorten(redact(record['message'])) : undefined;
  // Redacted after parsing: a JSON escape (\u0041) in the raw text could hide the token from a textual scan.
  const fieldErrors = toFieldErrors(record['errors'], (raw) => escapeControlChars(redact(raw)));
  return { message, fieldErrors, snippet: message ?? shorten(redact(text)) };
}

/**
 * The typed error for a non-2xx answer. The request was sent: the service answered it. An
 * HTTP-date Retry-After and the daily reset are counted from `nowMs`, when the answer came;
 * `secrets` (the token, any secret the request carried) are removed from what the server said.
 */
export function errorFromResponse(
  endpoint: Endpoint,
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
  nowMs: number,
  secrets: readonly string[] = [],
): ApiError {
  const body = parseErrorBody(bodyText, redactor(secrets));
  const details = {
    ...endpoint,
    status,
    requestSent: true,
    rateLimit: parseRateLimit(headers),
    retryAfterMs: parseRetryAfterMs(headers, nowMs),
    serviceMessage: body.message,
  };
  if (status === 401 || status === 403) return new AuthError(details);
  if (status === 404) return new NotFoundError(details);
  if (status === 422) return new ValidationError({ ...details, fieldErrors: body.fieldErrors });
  if (status === 429) {
    const retryAfterMs = rateLimitWaitMs(headers, nowMs);
    return new RateLimitError({ ...details, retryAfterMs, limitType: parseLimitType(headers) });
  }
  if (status >= 500) return new ServerError({ ...details, snippet: body.snippet });
  return new ClientError(details);
}

/**
 * A TLS handshake the certificate check failed: the connection never carried a byte of HTTP.
 * (Errors of a TLS connection already up, such as a bad record, are not here: a request may
 * have gone out on it.)
 */
const TLS_HANDSHAKE_CODES = [
  ...['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
  ...['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID'],
  ...['CERT_UNTRUSTED', 'CERT_REVOKED', 'ERR_TLS_CERT_ALTNAME_INVALID'],
];

// Failures that happen before a connection exists: no byte of the request can have been sent.
const NOT_SENT_CODES = new Set([
  ...['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'],
  ...TLS_HANDSHAKE_CODES,
]);

const TIMEOUT_PHASES: Record<string, TimeoutPhase> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'headers',
  UND_ERR_BODY_TIMEOUT: 'body',
};

/** The error code of an undici or system error; AggregateError (happy eyeballs) uses its first. */
function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) ? errorCode(inner[0]) : undefined;
}

/**
 * Where a request goes and how long it may wait. `origin` is the service's, for calls to the
 * service: a connection that never opened is then an UnreachableError naming its host.
 * Downloads leave it out (a storage host is not configured).
 */
export type Transport = Endpoint & { origin?: string; timeoutMs?: number; connectTimeoutMs?: number | undefined };

/** `dispatched`: the request was handed to undici; from then on it may have been sent. */
type TransportContext = Transport & { dispatched: boolean; aborted?: boolean | undefined };

/**
 * The typed error for a failure without an HTTP answer. `requestSent` is false only for
 * connect-phase failures or when nothing was dispatched; everything else is "may have been sent".
 */
export function errorFromTransport(error: unknown, context: TransportContext): ApiError {
  if (error instanceof ApiError) return error;
  const { dispatched, timeoutMs, connectTimeoutMs, aborted, origin, ...endpoint } = context;
  const code = errorCode(error);
  const requestSent = dispatched && !(code !== undefined && NOT_SENT_CODES.has(code));
  if (origin !== undefined && dispatched && !aborted && !requestSent) {
    const reason = unreachableReason(code, connectTimeoutMs);
    return new UnreachableError({ ...endpoint, networkCode: code, host: hostOf(origin), reason, cause: error });
  }
  const phase = code === undefined ? undefined : TIMEOUT_PHASES[code];
  if (phase !== undefined) {
    const limitMs = phase === 'connect' ? connectTimeoutMs : timeoutMs;
    return new TimeoutError({ ...endpoint, requestSent, networkCode: code, phase, timeoutMs: limitMs, cause: error });
  }
  const networkCode = aborted ? 'ABORT_ERR' : code;
  const detail = aborted ? 'aborted' : error instanceof Error ? error.message : String(error);
  return new NetworkError({ ...endpoint, requestSent, networkCode, detail, cause: error });
}

/** `https://api.deapi.ai` → `api.deapi.ai:443`: the port is what a firewall or a proxy is about. */
function hostOf(origin: string): string {
  const url = new URL(origin);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

function unreachableReason(code: string | undefined, connectTimeoutMs: number | undefined): string {
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no connection${connectTimeoutMs === undefined ? '' : ` within ${connectTimeoutMs} ms`}`;
  }
  if (code !== undefined && TLS_HANDSHAKE_CODES.includes(code)) return `TLS: ${code}`;
  return code ?? 'connection failed';
}

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

/** Rate-limit headers as read off one response; every field optional, as the service sends them. */
export type RateLimitInfo = { -readonly [field in keyof typeof RATE_LIMIT_HEADERS]?: number };

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

function parseLimitType(headers: IncomingHttpHeaders): RateLimitType | undefined {
  const raw = headerValue(headers, 'x-ratelimit-type')?.trim().toLowerCase();
  return raw === 'minute' || raw === 'daily' ? raw : undefined;
}

/** Retry-After as milliseconds: delta seconds or an HTTP date; undefined when absent or unreadable. */
function parseRetryAfterMs(headers: IncomingHttpHeaders, nowMs: number): number | undefined {
  const raw = headerValue(headers, 'retry-after')?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  const dateMs = Date.parse(raw);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}

/**
 * How long a 429 asks us to wait: Retry-After when sent, else until the daily reset (00:00 UTC)
 * for a daily window, else one minute (a minute window, or a 429 that does not say which).
 */
function rateLimitWaitMs(headers: IncomingHttpHeaders, nowMs: number): number {
  const retryAfterMs = parseRetryAfterMs(headers, nowMs);
  if (retryAfterMs !== undefined) return retryAfterMs;
  if (parseLimitType(headers) !== 'daily') return MINUTE_MS;
  const now = new Date(nowMs);
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - nowMs;
}
