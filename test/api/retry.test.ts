import { describe, expect, it } from 'vitest';
import { ApiError, ServerError } from '../../src/api/errors.js';
import { backoffDelayMs, withRetries } from '../../src/api/retry.js';
import { rejectionOf, TTS_JOB, TTS_REQUEST, useScripted } from './setup.js';
import { clockStoppedAt } from '../helpers/clock.js';

const scripted = useScripted();
const FAST = { retries: 3, minDelayMs: 10, maxDelayMs: 50 };
const ID = { body: { data: { request_id: 'r-1' } } };

describe('withRetries', () => {
  it('retries a 503 on a submit, then succeeds, reporting each retry', async () => {
    const { server, client } = await scripted([{ status: 503, body: 'busy' }, { status: 503, body: 'busy' }, ID]);
    const retries: Array<[number, number]> = [];
    const answer = await withRetries(() => client.submit(TTS_REQUEST), {
      kind: 'submit',
      ...FAST,
      onRetry: (error, attempt) => retries.push([error.status ?? 0, attempt]),
    });
    expect(answer.value.requestId).toBe('r-1');
    expect(server.requests).toHaveLength(3);
    expect(retries).toEqual([
      [503, 1],
      [503, 2],
    ]);
  });

  it('never retries a 500 on a submit: its outcome is unknown', async () => {
    const { server, client } = await scripted([{ status: 500, body: { message: 'Server Error' } }, ID]);
    const error = await rejectionOf(withRetries(() => client.submit(TTS_REQUEST), { kind: 'submit', ...FAST }));
    expect(error).toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 500 on an idempotent call but never a 4xx or a shape error', async () => {
    const { server, client } = await scripted([
      { status: 500, body: { message: 'Server Error' } },
      { body: { data: { balance: 3 } } },
      { status: 422, body: { message: 'bad', errors: { model: ['bad'] } } },
      { body: { data: {} } },
    ]);
    expect(await withRetries(() => client.balance(), { kind: 'idempotent', ...FAST })).toEqual({ balanceUsd: 3 });
    expect(await rejectionOf(withRetries(() => client.balance(), { kind: 'idempotent', ...FAST }))).toMatchObject({ status: 422 });
    expect(await rejectionOf(withRetries(() => client.balance(), { kind: 'idempotent', ...FAST }))).toMatchObject({
      name: 'ResponseShapeError',
    });
    expect(server.requests).toHaveLength(4);
  });

  it('never retries a programming error', async () => {
    let calls = 0;
    const error = await rejectionOf(
      withRetries(
        async () => {
          calls++;
          throw new RangeError('bug');
        },
        { kind: 'idempotent', ...FAST },
      ),
    );
    expect(error).toBeInstanceOf(RangeError);
    expect(calls).toBe(1);
  });

  it('gives up after the configured retries with the last error', async () => {
    const { server, client } = await scripted((_request, index) => ({ status: 503, body: `busy ${index}` }));
    const error = await rejectionOf(withRetries(() => client.balance(), { kind: 'idempotent', ...FAST, retries: 2 }));
    expect(error).toMatchObject({ status: 503, snippet: 'busy 2' });
    expect(server.requests).toHaveLength(3);
  });

  it('honours Retry-After: the next request arrives no earlier than asked', async () => {
    const { server, client } = await scripted([
      { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Too Many Attempts.' } },
      ID,
    ]);
    const delays: number[] = [];
    await withRetries(() => client.submit(TTS_REQUEST), {
      kind: 'submit',
      retries: 2,
      minDelayMs: 1,
      maxDelayMs: 5_000,
      onRetry: (_error, _attempt, delayMs) => delays.push(delayMs),
    });
    const [first, second] = server.requests;
    expect(delays).toEqual([1_000]);
    expect((second?.arrivedAtMs ?? 0) - (first?.arrivedAtMs ?? 0)).toBeGreaterThanOrEqual(1_000 - 5);
  });

  it('leaves a wait longer than maxDelayMs (a daily limit) to the caller', async () => {
    // At midday on the client's clock: the reset is 12 hours away, not the last seconds of a real day.
    const { server, client } = await scripted([{ status: 429, headers: { 'x-ratelimit-type': 'daily' } }, ID], { clock: clockStoppedAt('2026-11-27T12:00:00Z') });
    const error = await rejectionOf(withRetries(() => client.submit(TTS_REQUEST), { kind: 'submit', ...FAST }));
    expect(error).toMatchObject({ name: 'RateLimitError', limitType: 'daily' });
    expect(server.requests).toHaveLength(1);
  });

  it('stops waiting at once on abort, rejecting with the abort reason', async () => {
    const { server, client } = await scripted([{ status: 503, headers: { 'retry-after': '30' } }, ID]);
    const controller = new AbortController();
    const reason = new Error('run stopping');
    const started = Date.now();
    const pending = withRetries(() => client.submit(TTS_REQUEST, { signal: controller.signal }), {
      kind: 'submit',
      retries: 3,
      minDelayMs: 10,
      maxDelayMs: 60_000,
      signal: controller.signal,
      onRetry: () => setTimeout(() => controller.abort(reason), 50),
    });
    const error = await rejectionOf(pending);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('an abort that fails a submit in flight keeps that attempt\'s own error', async () => {
    const { server, client } = await scripted([{ delayMs: 5_000, ...ID }]);
    const controller = new AbortController();
    const pending = withRetries(() => client.submit(TTS_REQUEST, { signal: controller.signal }), {
      kind: 'submit',
      ...FAST,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('stop')), 100);
    const error = await rejectionOf(pending);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'NetworkError', requestSent: true, networkCode: 'ABORT_ERR' });
    expect(server.requests).toHaveLength(1);
  });

  it('does not start when already aborted', async () => {
    let calls = 0;
    const reason = new Error('stopped');
    const error = await rejectionOf(
      withRetries(async () => calls++, { kind: 'idempotent', ...FAST, signal: AbortSignal.abort(reason) }),
    );
    expect(error).toBe(reason);
    expect(calls).toBe(0);
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially within [min, cap] with jitter', () => {
    expect(backoffDelayMs(1, 100, 10_000, () => 1)).toBe(100);
    expect(backoffDelayMs(3, 100, 10_000, () => 1)).toBe(400);
    expect(backoffDelayMs(3, 100, 10_000, () => 0)).toBe(100);
    expect(backoffDelayMs(20, 100, 10_000, () => 1)).toBe(10_000);
  });
});
