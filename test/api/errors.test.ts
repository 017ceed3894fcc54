import { describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import {
  ApiError,
  AuthError,
  ClientError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ResponseShapeError,
  ResultUrlExpiredError,
  ServerError,
  TimeoutError,
  UnreachableError,
  ValidationError,
  submitFailureKind,
} from '../../src/api/errors.js';
import { errorFromTransport } from '../../src/api/error-mapping.js';
import { errors as undiciErrors } from 'undici';
import { LocalIoError } from '../../src/errors.js';
import { closedPort, type Reply } from './scripted-server.js';
import { rejectionOf, TOKEN, TTS_JOB, TTS_REQUEST, useCleanup, useScripted } from './setup.js';

const scripted = useScripted();
const track = useCleanup();
const SUBMIT = '/api/v1/client/txt2audio';

async function submitError(reply: Reply): Promise<ApiError> {
  const { client } = await scripted([reply]);
  const error = await rejectionOf(client.submit(TTS_REQUEST));
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('errors from real answers', () => {
  it('401 is an AuthError with exit code 4 and a one-line message naming the token sources', async () => {
    const error = await submitError({ status: 401, body: { message: 'Unauthenticated.' } });
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ status: 401, exitCode: 4, requestSent: true, method: 'POST', path: SUBMIT });
    expect(error.message).toBe(
      'POST /api/v1/client/txt2audio: HTTP 401 not authenticated ("Unauthenticated."); check MEDIABATCH_TOKEN or --token-file',
    );
    expect(error.message).not.toContain(TOKEN);
  });

  it('403 is an AuthError saying permission was denied', async () => {
    const error = await submitError({ status: 403, body: { message: 'Account suspended.' } });
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain('HTTP 403 permission denied');
    expect(submitFailureKind(error)).toBe('fatal');
  });

  it('404 is a NotFoundError', async () => {
    const error = await submitError({ status: 404, body: { message: 'No query results for the requested resource.' } });
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, exitCode: 1 });
    expect(submitFailureKind(error)).toBe('refused');
  });

  it('413 is a ClientError that mentions the size limit', async () => {
    const error = await submitError({ status: 413, body: '<html><body><h1>413 Request Entity Too Large</h1></body></html>' });
    expect(error).toBeInstanceOf(ClientError);
    expect(error.message).toContain('request too large');
    expect(submitFailureKind(error)).toBe('refused');
  });

  it('422 is a ValidationError carrying every field error', async () => {
    const error = await submitError({
      status: 422,
      body: {
        message: 'The selected model is invalid. (and 1 more error)',
        errors: { model: ['The selected model is invalid.'], voice: ['The voice field is required.'] },
      },
    });
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({
      isBalance: false,
      exitCode: 1,
      fieldErrors: { model: ['The selected model is invalid.'], voice: ['The voice field is required.'] },
    });
    expect(error.message).toBe(
      'POST /api/v1/client/txt2audio: HTTP 422 refused: model: The selected model is invalid.; voice: The voice field is required.; fix these fields of the job',
    );
    expect(submitFailureKind(error)).toBe('refused');
  });

  it('422 about the balance is fatal, by field or by message', async () => {
    const byField = await submitError({ status: 422, body: { message: 'Not enough balance.', errors: { balance: ['Not enough balance.'] } } });
    expect(byField).toMatchObject({ isBalance: true, exitCode: 4, code: 'E_API_BALANCE' });
    expect(submitFailureKind(byField)).toBe('fatal');
    const byMessage = await submitError({ status: 422, body: { message: 'Insufficient balance to run this job.' } });
    expect(byMessage).toMatchObject({ isBalance: true });
  });

  it('429 with Retry-After waits that long and keeps the rate-limit headers', async () => {
    const error = await submitError({
      status: 429,
      body: { message: 'Too Many Attempts.' },
      headers: { 'retry-after': '17', 'x-ratelimit-type': 'minute', 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0' },
    });
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterMs: 17_000, limitType: 'minute', rateLimit: { limit: 5, remaining: 0 } });
    expect(submitFailureKind(error)).toBe('not-taken');
  });

  it('429 without Retry-After waits a minute, or until 00:00 UTC for a daily limit', async () => {
    const minute = await submitError({ status: 429, body: { message: 'Too Many Attempts.' } });
    expect(minute).toMatchObject({ retryAfterMs: 60_000, limitType: undefined });
    // Half an hour before the reset, on the client's clock.
    const clock = { nowMs: () => Date.parse('2026-11-27T23:30:00Z') };
    const { client } = await scripted([{ status: 429, headers: { 'x-ratelimit-type': 'daily' } }], { clock });
    const daily = (await rejectionOf(client.submit(TTS_REQUEST))) as RateLimitError;
    expect(daily.limitType).toBe('daily');
    expect(daily.retryAfterMs).toBe(30 * 60_000);
    expect(daily.message).toContain('daily limit reached');
  });

  it('500 JSON, 502 HTML and 503 are ServerErrors with a short readable snippet', async () => {
    const json = await submitError({ status: 500, body: { message: 'Server Error' } });
    expect(json).toBeInstanceOf(ServerError);
    expect(json).toMatchObject({ status: 500, snippet: 'Server Error' });
    expect(submitFailureKind(json)).toBe('unknown');
    const html = await submitError({
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: `<html><head><style>body{color:red}</style></head><body><h1>502 Bad Gateway</h1>${'<p>x</p>'.repeat(500)}</body></html>`,
    });
    expect(html).toBeInstanceOf(ServerError);
    expect((html as ServerError).snippet.startsWith('502 Bad Gateway')).toBe(true);
    expect((html as ServerError).snippet.length).toBeLessThanOrEqual(160);
    expect(html.message).not.toContain('\n');
    expect(submitFailureKind(html)).toBe('unknown');
    const unavailable = await submitError({ status: 503, body: 'Service Unavailable', headers: { 'retry-after': '2' } });
    expect(unavailable).toMatchObject({ status: 503, retryAfterMs: 2_000 });
    expect(submitFailureKind(unavailable)).toBe('not-taken');
  });
});

describe('transport failures', () => {
  it('a refused connection is a NetworkError that was provably not sent: the service is unreachable (exit 4)', async () => {
    const port = await closedPort();
    const client = createServiceClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN });
    track(() => client.close());
    const error = await rejectionOf(client.submit(TTS_REQUEST));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error).toMatchObject({ requestSent: false, networkCode: 'ECONNREFUSED', path: SUBMIT, host: `127.0.0.1:${port}`, code: 'E_CONNECT', exitCode: 4 });
    // Still retried as a submit the service provably did not take.
    expect(submitFailureKind(error)).toBe('not-taken');
  });

  it('a connection that never opened names the default port of the scheme', () => {
    const error = errorFromTransport(new undiciErrors.ConnectTimeoutError(), {
      method: 'GET',
      path: '/api/v1/client/balance',
      origin: 'https://api.example.com',
      dispatched: true,
      connectTimeoutMs: 10_000,
    });
    expect(error.message).toBe(
      'GET /api/v1/client/balance: cannot reach api.example.com:443 (no connection within 10000 ms): check --base-url / MEDIABATCH_BASE_URL and your network; the request was not sent',
    );
  });

  it('a DNS failure is a NetworkError that was provably not sent', async () => {
    const client = createServiceClient({ baseUrl: 'http://mediabatch-test.invalid', token: TOKEN });
    track(() => client.close());
    const error = await rejectionOf(client.balance());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ requestSent: false, path: '/api/v1/client/balance' });
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((error as NetworkError).networkCode);
  });

  it('a connect timeout is a TimeoutError in the connect phase, not sent', () => {
    const error = errorFromTransport(new undiciErrors.ConnectTimeoutError(), {
      method: 'POST',
      path: SUBMIT,
      dispatched: true,
      timeoutMs: 60_000,
      connectTimeoutMs: 10_000,
    });
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'connect', requestSent: false });
    expect(error.message).toBe(
      'POST /api/v1/client/txt2audio: timed out connecting after 10000 ms; the request was not sent; check the connection and --base-url, then try again later',
    );
    expect(submitFailureKind(error)).toBe('not-taken');
  });

  it('an abort before dispatch is not sent', async () => {
    const { server, client } = await scripted([]);
    const error = await rejectionOf(client.submit(TTS_REQUEST, { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ name: 'NetworkError', requestSent: false, networkCode: 'ABORT_ERR' });
    expect(server.requests).toHaveLength(0);
  });

  it('a reset after the request body was read may have been sent', async () => {
    const { server, client } = await scripted([{ reset: true }]);
    const error = await rejectionOf(client.submit(TTS_REQUEST));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ requestSent: true });
    expect(server.requests).toHaveLength(1);
    expect(submitFailureKind(error)).toBe('unknown');
  });

  it('a slow answer times out waiting for headers, after sending', async () => {
    const { client } = await scripted([{ delayMs: 2_000, body: { data: { request_id: 'late' } } }], { requestTimeoutMs: 200 });
    const error = await rejectionOf(client.submit(TTS_REQUEST));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', requestSent: true, networkCode: 'UND_ERR_HEADERS_TIMEOUT' });
    expect((error as Error).message).toBe(
      'POST /api/v1/client/txt2audio: timed out waiting for the answer after 200 ms; the request may have reached the service; check the connection and --base-url, then try again later',
    );
    expect(submitFailureKind(error)).toBe('unknown');
  });

  it('a body that stalls times out reading it', async () => {
    const { client } = await scripted([{ partialBody: '{"data":', stallMs: 2_000, body: '{"request_id":"x"}}' }], { requestTimeoutMs: 200 });
    const error = await rejectionOf(client.submit(TTS_REQUEST));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'body', requestSent: true });
  });
});

describe('submitFailureKind', () => {
  const base = { method: 'POST', path: SUBMIT, requestSent: true };
  it.each([
    ['429', new RateLimitError({ ...base, status: 429, limitType: 'minute', retryAfterMs: 1 }), 'not-taken'],
    ['503', new ServerError({ ...base, status: 503, snippet: '' }), 'not-taken'],
    ['not sent', new NetworkError({ ...base, requestSent: false, networkCode: 'ECONNREFUSED', detail: '' }), 'not-taken'],
    ['connect timeout', new TimeoutError({ ...base, requestSent: false, networkCode: 'UND_ERR_CONNECT_TIMEOUT', phase: 'connect' }), 'not-taken'],
    ['401', new AuthError({ ...base, status: 401 }), 'fatal'],
    ['403', new AuthError({ ...base, status: 403 }), 'fatal'],
    ['422 balance', new ValidationError({ ...base, status: 422, fieldErrors: { balance: ['low'] } }), 'fatal'],
    ['422 field', new ValidationError({ ...base, status: 422, fieldErrors: { model: ['bad'] } }), 'refused'],
    ['400', new ClientError({ ...base, status: 400 }), 'refused'],
    ['404', new NotFoundError({ ...base, status: 404 }), 'refused'],
    ['413', new ClientError({ ...base, status: 413 }), 'refused'],
    ['image unreadable', new LocalIoError('cannot read image'), 'refused'],
    ['500', new ServerError({ ...base, status: 500, snippet: '' }), 'unknown'],
    ['502', new ServerError({ ...base, status: 502, snippet: '' }), 'unknown'],
    ['504', new ServerError({ ...base, status: 504, snippet: '' }), 'unknown'],
    ['reset', new NetworkError({ ...base, networkCode: 'UND_ERR_SOCKET', detail: '' }), 'unknown'],
    ['headers timeout', new TimeoutError({ ...base, networkCode: 'UND_ERR_HEADERS_TIMEOUT', phase: 'headers' }), 'unknown'],
    ['shape', new ResponseShapeError({ ...base, status: 200, issues: '' }), 'unknown'],
    ['expired url', new ResultUrlExpiredError({ ...base, status: 403 }), 'unknown'],
    ['programming error', new TypeError('x is undefined'), 'unknown'],
    ['a string', 'boom', 'unknown'],
  ])('%s → %s', (_name, error, kind) => {
    expect(submitFailureKind(error)).toBe(kind);
  });
});
