import { afterEach, describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../../src/sim/index.js';
import { expectDocument } from '../helpers/documents.js';
import { call, FAST, startSimulator, submitAudio, type Simulator } from './helpers.js';

describe('parseFaultSpec', () => {
  it('reads unscoped entries into every scope and scoped ones into theirs', () => {
    const spec = parseFaultSpec(' 503=0.1, submit:500-after=0.2 ,status:slow=0.05');
    expect(spec.submit).toEqual([{ kind: '503', probability: 0.1 }, { kind: '500-after', probability: 0.2 }]);
    expect(spec.price).toEqual([{ kind: '503', probability: 0.1 }]);
    expect(spec.status).toEqual([{ kind: '503', probability: 0.1 }, { kind: 'slow', probability: 0.05 }]);
    expect(parseFaultSpec('')).toEqual({ submit: [], price: [], status: [], webhook: [] });
  });

  it('keeps webhook faults to webhook deliveries, and answer faults to the answers', () => {
    const spec = parseFaultSpec('503=0.1,duplicate=0.2,webhook:forged=0.05');
    expect(spec.webhook).toEqual([{ kind: 'duplicate', probability: 0.2 }, { kind: 'forged', probability: 0.05 }]);
    expect(spec.submit).toEqual([{ kind: '503', probability: 0.1 }]);
    expect(() => parseFaultSpec('status:stale=0.1')).toThrow('fault "status:stale=0.1": stale is a fault of webhook deliveries: write it as webhook:stale');
    expect(() => parseFaultSpec('webhook:503=0.1')).toThrow('fault "webhook:503=0.1": 503 is a fault of the answers (submit, price, status), not of webhook deliveries');
    expect(() => parseFaultSpec('replay=0.6,webhook:oversized=0.6')).toThrow('probabilities for webhook add up to 1.2, more than 1');
  });

  it('says what is wrong with a bad spec', () => {
    expect(() => parseFaultSpec('504=0.1')).toThrow(
      'fault "504=0.1": unknown kind "504", expected one of 503, 500-before, 500-after, reset-before, reset-after, slow, html502 (answers) or duplicate, reorder, bad-signature, stale, replay, oversized, forged (webhook deliveries)',
    );
    expect(() => parseFaultSpec('models:503=0.1')).toThrow('unknown scope "models", expected one of submit, price, status, webhook');
    expect(() => parseFaultSpec('503=1.5')).toThrow('fault "503=1.5": probability must be a number between 0 and 1, got "1.5"');
    expect(() => parseFaultSpec('503')).toThrow('expected kind=probability');
    expect(() => parseFaultSpec('503=0.1,,slow=0.1')).toThrow('empty entry');
    expect(() => parseFaultSpec('503=0.6,submit:slow=0.6')).toThrow('probabilities for submit add up to 1.2, more than 1');
    expect(() => parseFaultSpec('503=0.1,submit:503=0.1')).toThrow('503 is given twice for submit');
  });
});

describe('simulator: injected faults', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  const faulty = (faults: string) => startSimulator({ ...FAST, faults, balanceUsd: 10, slowMs: 200 });
  const charged = (s: Simulator) => s.balanceUsd < 10;

  it('503: refused with Retry-After, nothing accepted', async () => {
    sim = await faulty('submit:503=1');
    const answer = await submitAudio(sim);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(typeof answer.body.message).toBe('string');
    expect(sim.stats.accepted).toHaveLength(0);
    expect(charged(sim)).toBe(false);
    expect(sim.stats.faults).toEqual({ '503': 1 });
  });

  it('500-before: Server Error, nothing accepted; 500-after: Server Error, accepted and charged', async () => {
    sim = await faulty('submit:500-before=1');
    expect(await submitAudio(sim)).toMatchObject({ status: 500, body: { message: 'Server Error' } });
    expect(sim.stats.accepted).toHaveLength(0);
    sim.setFaults('submit:500-after=1');
    expect(await submitAudio(sim)).toMatchObject({ status: 500, body: { message: 'Server Error' } });
    expect(sim.stats.accepted).toHaveLength(1);
    expect(charged(sim)).toBe(true);
    expect(sim.stats.faults).toEqual({ '500-before': 1, '500-after': 1 });
  });

  it('html502: an HTML body, nothing accepted', async () => {
    sim = await faulty('submit:html502=1');
    const answer = await submitAudio(sim);
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toMatch(/text\/html/);
    expect(answer.text).toContain('<html>');
    expect(sim.stats.accepted).toHaveLength(0);
  });

  it('reset-before drops the connection with nothing accepted; reset-after drops it after accepting', async () => {
    sim = await faulty('submit:reset-before=1');
    await expect(submitAudio(sim)).rejects.toThrow();
    expect(sim.stats.accepted).toHaveLength(0);
    sim.setFaults('submit:reset-after=1');
    await expect(submitAudio(sim)).rejects.toThrow();
    expect(sim.stats.accepted).toHaveLength(1);
    expect(charged(sim)).toBe(true);
  });

  it('slow: the job is accepted at once and the answer comes slowMs later', async () => {
    sim = await faulty('submit:slow=1');
    const started = Date.now();
    const pending = submitAudio(sim);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sim.stats.accepted).toHaveLength(1);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(answer.body.data.request_id).toBe(sim.stats.accepted[0]?.requestId);
  });

  it('scopes faults to their endpoint class; "after" faults on price and status just answer the fault', async () => {
    sim = await faulty('status:503=1,price:500-after=1');
    const id = (await submitAudio(sim)).body.data.request_id;
    expect((await call(sim, `/api/v1/client/request-status/${id}`)).status).toBe(503);
    expect((await call(sim, '/api/v1/client/txt2audio/price-calculation', { json: {} })).status).toBe(500);
    expect((await call(sim, '/api/v1/client/models')).status).toBe(200);
    expect(sim.stats.faults).toEqual({ '503': 1, '500-after': 1 });
  });

  it('is deterministic under a seed: the same calls meet the same faults', async () => {
    const story = async (seed: number): Promise<number[]> => {
      const s = await startSimulator({ ...FAST, seed, faults: '503=0.3,500-before=0.2,html502=0.1' });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 40; i++) statuses.push((await call(s, '/api/v1/client/img2video/price-calculation', { json: {} })).status);
        return statuses;
      } finally {
        await s.close();
      }
    };
    const a = await story(7);
    expect(await story(7)).toEqual(a);
    expect(await story(8)).not.toEqual(a);
    expect(new Set(a)).toEqual(new Set([422, 503, 500, 502]));
  });

  it('decides failing jobs from the seed too', async () => {
    const outcomes = async (seed: number): Promise<boolean[]> => {
      const s = await startSimulator({ ...FAST, seed, jobErrorRate: 0.5, pendingMs: { txt2audio: 0, img2video: 0 }, processingMs: { txt2audio: 0, img2video: 0 } });
      try {
        const out: boolean[] = [];
        for (let i = 0; i < 12; i++) {
          const id = (await submitAudio(s, { text: `job ${i}` })).body.data.request_id;
          out.push((await call(s, `/api/v1/client/request-status/${id}`)).body.data.status === 'error');
        }
        return out;
      } finally {
        await s.close();
      }
    };
    const a = await outcomes(3);
    expect(await outcomes(3)).toEqual(a);
    expect(a).toContain(true);
    expect(a).toContain(false);
  });

  it('adds latencyMs to every API answer and serves its stats with the token', async () => {
    sim = await startSimulator({ ...FAST, latencyMs: 80 });
    const started = Date.now();
    await call(sim, '/api/v1/client/balance');
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    await submitAudio(sim);
    const stats = await call(sim, '/__sim/stats');
    expect(stats.body).toMatchObject({ schema_version: 1, calls: { balance: 1, submit: 1 }, duplicates: [], jobs_by_status: { error: 0 } });
    expectDocument('sim-stats', JSON.stringify(stats.body));
    expect(stats.body.accepted).toHaveLength(1);
    expect((await call(sim, '/__sim/stats', { token: 'wrong' })).status).toBe(401);
  });
});
