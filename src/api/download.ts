/**
 * Fetching a pre-signed result URL to a file. The URL is its own credential, so no request
 * here ever carries the Authorization header, on the first hop or any redirect. Redirects are
 * followed by hand, by the rule in `redirectRefusal`.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { LocalIoError } from '../errors.js';
import { ApiError, ResultUrlError, ResultUrlExpiredError } from './errors.js';
import { errorFromResponse, errorFromTransport, headerValue, type Endpoint } from './error-mapping.js';
import { dropBody, readText, send, type HttpContext } from './http.js';
import type { DownloadResult } from './types.js';

const MAX_REDIRECTS = 3;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Statuses a storage service answers for an expired or revoked pre-signed URL. */
const EXPIRED_STATUSES = new Set([401, 403, 404, 410]);

type DownloadContext = Pick<HttpContext, 'dispatcher' | 'userAgent' | 'clock'> & { timeoutMs: number };

/** Where an error about `url` points: never the query string, which holds the signature. */
function endpointOf(url: URL | string): Endpoint {
  if (typeof url === 'string') return { method: 'GET', path: url.split(/[?#]/, 1)[0] ?? '' };
  return { method: 'GET', path: `${url.origin}${url.pathname}` };
}

function parseResultUrl(raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url?.protocol === 'http:' || url?.protocol === 'https:') return url;
  const scheme = url?.protocol ?? 'an unreadable URL';
  throw new ResultUrlError({
    ...endpointOf(raw),
    requestSent: false,
    reason: 'scheme',
    detail: `only http and https result URLs are fetched, got ${scheme}; the service sent an unexpected URL`,
  });
}

/**
 * Why a redirect from `from` to `to` is not followed, or undefined when it is. Pre-signed URLs
 * often hop to a storage or CDN host, so another origin is followed when it is https: the
 * result's bytes cannot be read or changed on the way, and no hop carries a credential of ours.
 * Plain http to another origin, or any scheme but http(s), is refused.
 */
export function redirectRefusal(from: URL, to: URL): string | undefined {
  if (to.protocol !== 'http:' && to.protocol !== 'https:') {
    return `redirected to a ${to.protocol} URL; only http and https results are fetched`;
  }
  if (to.origin === from.origin || to.protocol === 'https:') return undefined;
  return `redirected to plain http on another origin (${to.origin}); only https redirects leave the origin`;
}

/** The URL `location` sends `url` to, or the ResultUrlError refusing it (named after `start`). */
function nextHop(start: URL, url: URL, location: string, redirects: number, status: number): URL {
  const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
  const tooMany = redirects >= MAX_REDIRECTS ? `more than ${MAX_REDIRECTS} redirects` : undefined;
  const refusal = next === undefined ? 'redirected to an unreadable URL' : (redirectRefusal(url, next) ?? tooMany);
  if (next !== undefined && refusal === undefined) return next;
  const detail = refusal ?? '';
  throw new ResultUrlError({ ...endpointOf(start), status, requestSent: true, reason: 'redirect', detail });
}

async function discard(response: Dispatcher.ResponseData): Promise<void> {
  try {
    await response.body.dump();
  } catch {
    // The answer is being thrown away: a failure reading it changes nothing.
  }
}

/** GETs `start`, following up to MAX_REDIRECTS redirects that `redirectRefusal` allows. */
async function fetchFollowing(
  context: DownloadContext,
  start: URL,
  signal: AbortSignal | undefined,
): Promise<{ url: URL; response: Dispatcher.ResponseData }> {
  const headers = { accept: '*/*', 'user-agent': context.userAgent };
  for (let url = start, redirects = 0; ; redirects++) {
    const request = { origin: url.origin, path: `${url.pathname}${url.search}`, method: 'GET' as const, headers };
    const transport = { ...endpointOf(url), timeoutMs: context.timeoutMs };
    const response = await send(context.dispatcher, request, transport, signal);
    const location = headerValue(response.headers, 'location');
    if (response.statusCode < 300 || response.statusCode >= 400 || location === undefined) return { url, response };
    await discard(response);
    url = nextHop(start, url, location, redirects, response.statusCode);
  }
}

async function errorForStatus(url: URL, response: Dispatcher.ResponseData, nowMs: number): Promise<ApiError> {
  const endpoint = endpointOf(url);
  const status = response.statusCode;
  if (EXPIRED_STATUSES.has(status)) {
    await discard(response);
    return new ResultUrlExpiredError({ ...endpoint, status, requestSent: true });
  }
  const text = await readText(response.body, MAX_ERROR_BODY_BYTES).catch(() => '');
  return errorFromResponse(endpoint, status, response.headers, text, nowMs);
}

const MIB = 1024 * 1024;

function tooLarge(url: URL, maxBytes: number, got: string): ResultUrlError {
  const limit = maxBytes % MIB === 0 ? `${maxBytes / MIB} MB` : `${maxBytes} bytes`;
  return new ResultUrlError({
    ...endpointOf(url),
    status: 200,
    requestSent: true,
    reason: 'too-large',
    detail: `result is larger than the limit of ${limit} (${got}); if that size is expected, run again with a higher --max-result-mb`,
  });
}

/**
 * Streams `rawUrl` to `destPath`, hashing as it goes. Refuses non-http(s) URLs, redirects
 * `redirectRefusal` refuses, and bodies over `maxBytes`; on any failure the partial file is removed.
 */
export async function downloadResult(
  context: DownloadContext,
  rawUrl: string,
  destPath: string,
  options: { maxBytes: number; signal?: AbortSignal | undefined },
): Promise<DownloadResult> {
  const { url, response } = await fetchFollowing(context, parseResultUrl(rawUrl), options.signal);
  if (response.statusCode < 200 || response.statusCode >= 300) throw await errorForStatus(url, response, context.clock.nowMs());
  const declared = Number(headerValue(response.headers, 'content-length'));
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    dropBody(response.body);
    throw tooLarge(url, options.maxBytes, `Content-Length ${declared}`);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) return callback(tooLarge(url, options.maxBytes, `more than ${bytes} bytes sent`));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const file = createWriteStream(destPath);
  // pipeline destroys every stream with the first error, so afterwards each one looks failed:
  // only the first 'error' event tells a cut connection (retried later) from a disk that
  // refuses the file (which stops the run). These listeners run before pipeline's own.
  let failedFirst: 'body' | 'file' | undefined;
  response.body.once('error', () => (failedFirst ??= 'body'));
  file.once('error', () => (failedFirst ??= 'file'));
  try {
    await pipeline(response.body, meter, file);
  } catch (error) {
    await rm(destPath, { force: true });
    if (error instanceof ApiError) throw error;
    if (failedFirst === 'file') throw new LocalIoError(`cannot write ${destPath}: ${(error as Error).message}`, 'E_IO', error);
    throw errorFromTransport(error, { ...endpointOf(url), dispatched: true, timeoutMs: context.timeoutMs, aborted: options.signal?.aborted });
  }
  return { bytes, sha256: hash.digest('hex'), contentType: headerValue(response.headers, 'content-type') };
}
