/**
 * One API call over the shared undici dispatcher: auth and accept headers, per-call timeouts,
 * the body read with a size cap, and every failure turned into a typed ApiError.
 */
import type { Dispatcher, FormData } from 'undici';
import type { z } from 'zod';
import { ResponseShapeError, type ApiErrorDetails } from './errors.js';
import { errorFromResponse, errorFromTransport, parseRateLimit } from './error-mapping.js';
import type { Endpoint, Transport } from './error-mapping.js';
import type { WithRateLimit } from './types.js';
import type { Clock } from '../clock.js';

/** API answers are small JSON documents; a bigger one means we are talking to the wrong thing. */
const MAX_API_BODY_BYTES = 16 * 1024 * 1024;

export type HttpContext = {
  dispatcher: Dispatcher;
  origin: string;
  basePath: string;
  token: string;
  userAgent: string;
  connectTimeoutMs: number;
  clock: Clock;
};

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

/**
 * Sends one request with `transport.timeoutMs` for the headers and each piece of the body; a
 * failure before an answer (an abort before dispatch too) is thrown as its typed error.
 */
export async function send(
  dispatcher: Dispatcher,
  request: Omit<Dispatcher.RequestOptions, 'signal'>,
  transport: Transport & { timeoutMs: number },
  signal: AbortSignal | undefined,
): Promise<Dispatcher.ResponseData> {
  if (signal?.aborted) throw errorFromTransport(signal.reason, { ...transport, dispatched: false, aborted: true });
  const timeouts = { headersTimeout: transport.timeoutMs, bodyTimeout: transport.timeoutMs };
  try {
    return await dispatcher.request({ ...request, ...timeouts, signal: signal ?? null });
  } catch (error) {
    throw errorFromTransport(error, { ...transport, dispatched: true, aborted: signal?.aborted });
  }
}

/** Reads a body to text, refusing more than `maxBytes`; a body not read to its end is dropped. */
export async function readText(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new Error(`answer larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    dropBody(body);
    throw error;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Abandons a response body; undici emits an abort error on destroy, which nobody needs. */
export function dropBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/**
 * Sends one call and returns its answer as `schema` reads it; any non-2xx, transport failure or
 * 2xx body that is not JSON of that shape is thrown as the matching ApiError.
 */
export async function callApi<S extends z.ZodType>(
  context: HttpContext,
  call: ApiCall,
  schema: S,
): Promise<WithRateLimit<z.output<S>>> {
  const path = `${context.basePath}${call.path}`;
  const endpoint: Endpoint = { method: call.method, path };
  const { origin, connectTimeoutMs } = context;
  const transport = { ...endpoint, origin, timeoutMs: call.timeoutMs, connectTimeoutMs };
  const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
  const headers: Record<string, string> = {
    authorization: `Bearer ${context.token}`,
    accept: 'application/json',
    'user-agent': context.userAgent,
  };
  // FormData sets its own multipart content-type with the boundary.
  if (call.json !== undefined) headers['content-type'] = 'application/json';
  const body = call.form ?? (call.json === undefined ? null : JSON.stringify(call.json));
  const request = { origin, path: `${path}${query}`, method: call.method, headers, body };
  const response = await send(context.dispatcher, request, transport, call.signal);
  let text: string;
  try {
    text = await readText(response.body, MAX_API_BODY_BYTES);
  } catch (error) {
    throw errorFromTransport(error, { ...transport, dispatched: true, aborted: call.signal?.aborted });
  }
  const { statusCode: status } = response;
  if (status >= 400) {
    const secrets = [context.token, ...(call.redact ?? [])];
    throw errorFromResponse(endpoint, status, response.headers, text, context.clock.nowMs(), secrets);
  }
  const answered = { ...endpoint, status, requestSent: true };
  const issues = `HTTP ${status} instead of 2xx`;
  if (status < 200 || status >= 300) throw new ResponseShapeError({ ...answered, issues });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ResponseShapeError({ ...answered, issues: 'body is not JSON', cause: error });
  }
  return { value: parseAnswer(schema, json, answered), rateLimit: parseRateLimit(response.headers) };
}

/** Validates a 2xx body; a mismatch is a ResponseShapeError (the request was sent and answered). */
function parseAnswer<S extends z.ZodType>(schema: S, json: unknown, answered: ApiErrorDetails): z.output<S> {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new ResponseShapeError({ ...answered, issues, cause: result.error });
}
