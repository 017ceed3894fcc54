/**
 * One API call over the shared undici dispatcher: auth and accept headers, per-call timeouts,
 * the body read with a size cap, and every failure turned into a typed ApiError.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher, FormData } from 'undici';
import type { z } from 'zod';
import { ResponseShapeError } from './errors.js';
import { errorFromResponse, errorFromTransport, type Endpoint } from './error-mapping.js';
import { parseRateLimit } from './rate-limit.js';
import type { RateLimitInfo } from './types.js';
import type { Clock } from '../clock.js';

/** API answers are small JSON documents; a bigger one means we are talking to the wrong thing. */
const MAX_API_BODY_BYTES = 16 * 1024 * 1024;

export interface HttpContext {
  dispatcher: Dispatcher;
  /** e.g. https://api.deapi.ai */
  origin: string;
  /** Path prefix of the base URL, without trailing slash ('' for none). */
  basePath: string;
  token: string;
  userAgent: string;
  connectTimeoutMs: number;
  clock: Clock;
}

export interface ApiCall {
  method: 'GET' | 'POST';
  /** Path under the base URL, starting with '/'. */
  path: string;
  query?: Record<string, string> | undefined;
  json?: unknown;
  form?: FormData | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Values the request carries that no error text may repeat (the token always is). */
  redact?: readonly string[] | undefined;
}

export interface ApiAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  rateLimit: RateLimitInfo;
}

/** Reads a body to text, refusing more than `maxBytes`. */
export async function readText(body: AsyncIterable<Buffer | string>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > maxBytes) throw new Error(`answer larger than ${maxBytes} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Abandons a response body; undici emits an abort error on destroy, which nobody needs. */
export function dropBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function buildHeaders(context: HttpContext, call: ApiCall): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${context.token}`,
    accept: 'application/json',
    'user-agent': context.userAgent,
  };
  // FormData sets its own multipart content-type with the boundary.
  if (call.json !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/**
 * Sends one call and returns its parsed JSON answer; any non-2xx, transport failure or
 * unreadable 2xx body is thrown as the matching ApiError.
 */
export async function callApi(context: HttpContext, call: ApiCall): Promise<ApiAnswer> {
  const path = `${context.basePath}${call.path}`;
  const endpoint: Endpoint = { method: call.method, path };
  const transport = { ...endpoint, origin: context.origin, timeoutMs: call.timeoutMs, connectTimeoutMs: context.connectTimeoutMs };
  if (call.signal?.aborted) {
    throw errorFromTransport(call.signal.reason, { ...transport, dispatched: false, aborted: true });
  }
  const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
  let response: Dispatcher.ResponseData;
  try {
    response = await context.dispatcher.request({
      origin: context.origin,
      path: `${path}${query}`,
      method: call.method,
      headers: buildHeaders(context, call),
      body: call.form ?? (call.json === undefined ? null : JSON.stringify(call.json)),
      signal: call.signal ?? null,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
  } catch (error) {
    throw errorFromTransport(error, { ...transport, dispatched: true, aborted: call.signal?.aborted });
  }
  let text: string;
  try {
    text = await readText(response.body, MAX_API_BODY_BYTES);
  } catch (error) {
    dropBody(response.body);
    throw errorFromTransport(error, { ...transport, dispatched: true, aborted: call.signal?.aborted });
  }
  const { statusCode: status, headers } = response;
  if (status >= 400) throw errorFromResponse(endpoint, status, headers, text, context.clock.nowMs(), [context.token, ...(call.redact ?? [])]);
  const rateLimit = parseRateLimit(headers);
  if (status < 200 || status >= 300) {
    throw new ResponseShapeError({ ...endpoint, status, requestSent: true, rateLimit, issues: `HTTP ${status} instead of 2xx` });
  }
  try {
    return { status, headers, body: JSON.parse(text) as unknown, rateLimit };
  } catch (error) {
    throw new ResponseShapeError({ ...endpoint, status, requestSent: true, rateLimit, issues: 'body is not JSON', cause: error });
  }
}

/** Validates a 2xx body; a mismatch is a ResponseShapeError (the request was sent and answered). */
export function parseAnswer<S extends z.ZodType>(schema: S, answer: ApiAnswer, endpoint: Endpoint): z.output<S> {
  const result = schema.safeParse(answer.body);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new ResponseShapeError({
    ...endpoint,
    status: answer.status,
    requestSent: true,
    rateLimit: answer.rateLimit,
    issues,
    cause: result.error,
  });
}
