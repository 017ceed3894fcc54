import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startScripted, type Received, type Scripted } from '../security/servers.js';
import { FAST, sleep, startSimulator, submitAudio, type Simulator } from './helpers.js';

const SECRET = 'k'.repeat(40) + '-simulator-webhook-secret';
const HOOK = { webhook_url: 'https://hooks.example.test/in/deapi?tenant=7', webhook_secret: SECRET };

function signatureOf(req: Received, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(`${String(req.headers['x-deapi-timestamp'])}.${req.body}`).digest('hex')}`;
}

/** The deliveries a receiver got, parsed, in arrival order. */
function deliveries(receiver: Scripted): { req: Received; body: { event: string; delivery_id: string; data: Record<string, unknown> } }[] {
  return receiver.received.map((req) => ({ req, body: JSON.parse(req.body) as { event: string; delivery_id: string; data: Record<string, unknown> } }));
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('the condition never held');
    await sleep(10);
  }
}

describe('simulator: webhook deliveries', () => {
  let sim: Simulator | undefined;
  let receiver: Scripted | undefined;
  afterEach(async () => {
    await sim?.close();
    await receiver?.close();
  });

  const start = async (options: Parameters<typeof startSimulator>[0] = {}, answer: (req: Received) => number = () => 200): Promise<Simulator> => {
    receiver = await startScripted((req) => ({ status: answer(req), body: '{}' }));
    sim = await startSimulator({ ...FAST, webhookTarget: receiver.url, webhookRetryMs: 20, ...options });
    return sim;
  };

  it('posts job.processing then job.completed, signed, with the headers the service sends, to the URL\'s path', async () => {
    const s = await start();
    const requestId = (await submitAudio(s, HOOK)).body.data.request_id as string;
    await until(() => s.stats.webhooks.delivered === 2);
    const [started, ended] = deliveries(receiver!);
    expect(started!.req).toMatchObject({ method: 'POST', url: '/in/deapi?tenant=7' });
    expect(started!.body).toMatchObject({ event: 'job.processing', data: { job_request_id: requestId, status: 'processing', previous_status: 'pending', job_type: 'txt2audio' } });
    expect(ended!.body).toMatchObject({ event: 'job.completed', data: { job_request_id: requestId, status: 'done', previous_status: 'processing' } });
    expect(String(ended!.body.data['result_url'])).toMatch(new RegExp(`^${s.url}/results/${requestId}\\.wav\\?expires=\\d+&sig=[0-9a-f]+$`));
    for (const { req, body } of [started!, ended!]) {
      expect(req.headers['x-deapi-signature']).toBe(signatureOf(req));
      expect(req.headers['x-deapi-event']).toBe(body.event);
      expect(req.headers['x-deapi-delivery-id']).toBe(body.delivery_id);
      expect(Math.abs(Number(req.headers['x-deapi-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    }
    expect(started!.body.delivery_id).not.toBe(ended!.body.delivery_id);
    // A request without webhook_url gets no delivery.
    await submitAudio(s, { text: 'no hook' });
    await sleep(200);
    expect(receiver!.received).toHaveLength(2);
  });

  it('tells every time by its own clock: the signature time, the payload, and how long the result URL lives', async () => {
    // A day behind the real clock: a result URL that expired by the real clock is still good by the simulator's.
    const dayMs = 86_400_000;
    const s = await start({ clock: { nowMs: () => Date.now() - dayMs } });
    const requestId = (await submitAudio(s, HOOK)).body.data.request_id as string;
    await until(() => s.stats.webhooks.delivered === 2);
    const [started, ended] = deliveries(receiver!);
    for (const { req } of [started!, ended!]) expect(Math.abs(Number(req.headers['x-deapi-timestamp']) - (Date.now() - dayMs) / 1000)).toBeLessThan(5);
    expect(Math.abs(Date.parse(String(started!.body.data['started_at'])) - (Date.now() - dayMs))).toBeLessThan(5_000);
    const url = new URL(String(ended!.body.data['result_url']));
    expect(url.pathname).toBe(`/results/${requestId}.wav`);
    expect(Number(url.searchParams.get('expires'))).toBeLessThan(Date.now() - dayMs + 60_000 + 1);
    expect((await fetch(url)).status).toBe(200);
  });

  it('posts job.failed with the error, retryable and refunded', async () => {
    const s = await start({ jobErrorRate: 1 });
    await submitAudio(s, HOOK);
    await until(() => s.stats.webhooks.delivered === 2);
    const failed = deliveries(receiver!).find((d) => d.body.event === 'job.failed');
    expect(failed?.body.data).toMatchObject({ status: 'error', retryable: true, refunded: true, error_code: expect.any(String), error_message: expect.any(String) });
  });

  it('refuses a webhook_url that is not HTTPS and a secret outside 32 to 255 characters (422)', async () => {
    const s = await start();
    const answer = await submitAudio(s, { webhook_url: 'http://hooks.example.test/x', webhook_secret: 'short' });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual({
      webhook_url: ['The webhook url field must start with one of the following: https://.'],
      webhook_secret: ['The webhook secret field must be between 32 and 255 characters.'],
    });
    expect(s.stats.accepted).toHaveLength(0);
  });

  it('retries a delivery not answered 2xx, under the same delivery id', async () => {
    let refusals = 2;
    const s = await start({}, () => (refusals-- > 0 ? 503 : 200));
    await submitAudio(s, HOOK);
    await until(() => s.stats.webhooks.delivered === 2);
    // Each event was retried under its own delivery id until it was taken.
    const copies = countBy(deliveries(receiver!).map((d) => d.body.delivery_id));
    expect(Object.values(copies).reduce((a, b) => a + b, 0)).toBe(4);
    expect(Object.keys(copies)).toHaveLength(2);
    expect(s.stats.webhooks.answers).toEqual({ '503': 2, '200': 2 });
  });

  it('with nobody listening, tries each delivery the number of attempts given, then gives up', async () => {
    const s = await start({ webhookAttempts: 3 });
    s.setWebhookTarget(undefined);
    await submitAudio(s, HOOK);
    await until(() => s.stats.webhooks.gaveUp === 2);
    expect(s.stats.webhooks).toMatchObject({ events: 2, attempts: 6, delivered: 0, answers: { none: 6 } });
  });

  it('faults on demand: a spoilt first attempt is followed by a clean one', async () => {
    for (const fault of ['bad-signature', 'stale', 'oversized'] as const) {
      const verdicts = new Map<Received, number>();
      const s = await start({ faults: `webhook:${fault}=1` }, (req) => {
        const fresh = Math.abs(Number(req.headers['x-deapi-timestamp']) - Date.now() / 1000) < 300;
        const status = req.headers['x-deapi-signature'] === signatureOf(req) && req.body.length < 1024 * 1024 && fresh ? 200 : 401;
        verdicts.set(req, status);
        return status;
      });
      await submitAudio(s, HOOK);
      await until(() => s.stats.webhooks.delivered === 2);
      // Per event, in arrival order: the spoilt attempt (refused), then the clean retry.
      const byEvent = new Map<string, Received[]>();
      for (const req of receiver!.received) byEvent.set(String(req.headers['x-deapi-delivery-id']), [...(byEvent.get(String(req.headers['x-deapi-delivery-id'])) ?? []), req]);
      expect(byEvent.size).toBe(2);
      for (const [spoilt, clean, ...more] of byEvent.values()) {
        expect(more).toEqual([]);
        expect([verdicts.get(spoilt!), verdicts.get(clean!)], fault).toEqual([401, 200]);
        if (fault === 'bad-signature') expect(spoilt!.headers['x-deapi-signature']).not.toBe(signatureOf(spoilt!));
        if (fault === 'stale') expect(Date.now() / 1000 - Number(spoilt!.headers['x-deapi-timestamp'])).toBeGreaterThan(500);
        if (fault === 'oversized') expect(spoilt!.body.length).toBeGreaterThan(1024 * 1024);
      }
      expect(s.stats.webhooks.faults).toEqual({ [fault]: 2 });
      await s.close();
      await receiver!.close();
      sim = receiver = undefined;
    }
  });

  it('faults on demand: duplicates, replays, forgeries and events out of order', async () => {
    const s = await start({ faults: 'webhook:duplicate=1' });
    await submitAudio(s, HOOK);
    await until(() => receiver!.received.length === 4);
    expect(Object.values(countBy(deliveries(receiver!).map((d) => d.body.delivery_id)))).toEqual([2, 2]);

    s.setFaults('webhook:replay=1');
    await submitAudio(s, { ...HOOK, text: 'replayed' });
    await until(() => receiver!.received.length === 8);
    // Each event twice, the second time byte for byte and header for header the first.
    const replayed = receiver!.received.slice(4);
    for (const req of replayed) expect(replayed.filter((other) => other.body === req.body && other.headers['x-deapi-signature'] === req.headers['x-deapi-signature'])).toHaveLength(2);

    s.setFaults('webhook:forged=1');
    const forgedFor = (await submitAudio(s, { ...HOOK, text: 'forged' })).body.data.request_id as string;
    await until(() => receiver!.received.length === 12);
    const forged = deliveries(receiver!).slice(8).filter((d) => d.req.headers['x-deapi-signature'] !== signatureOf(d.req));
    expect(forged).toHaveLength(2);
    for (const d of forged) expect(d.body.data['job_request_id']).not.toBe(forgedFor);

    s.setFaults('webhook:reorder=1');
    await submitAudio(s, { ...HOOK, text: 'reordered' });
    await until(() => receiver!.received.length === 14);
    expect(deliveries(receiver!).slice(12).map((d) => d.body.event)).toEqual(['job.completed', 'job.processing']);
  });
});
