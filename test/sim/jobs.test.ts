import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { call, FAST, PNG, sleep, startSimulator, submitAudio, videoForm, waitForEnd, type Simulator } from './helpers.js';

describe('simulator: jobs, results and duplicates', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  it('moves a job from pending through processing to done with a fresh signed URL each time', async () => {
    // The simulator's clock moves only when the test moves it: every state is seen, however slow the machine.
    let nowMs = Date.parse('2026-11-27T12:00:00Z');
    const clock = { nowMs: () => nowMs };
    sim = await startSimulator({ ...FAST, clock, pendingMs: { txt2audio: 40, img2video: 40 }, processingMs: { txt2audio: 150, img2video: 150 } });
    const id = (await submitAudio(sim)).body.data.request_id as string;
    const seen: string[] = [];
    let progress = -1;
    for (;;) {
      const { body } = await call(sim, `/api/v1/client/request-status/${id}`);
      if (seen.at(-1) !== body.data.status) seen.push(body.data.status);
      if (body.data.status === 'processing') {
        expect(Number(body.data.progress)).toBeGreaterThanOrEqual(progress);
        progress = Number(body.data.progress);
      }
      if (body.data.status === 'done') break;
      expect(body.data.result_url).toBeNull();
      nowMs += 10;
    }
    expect(seen).toEqual(['pending', 'processing', 'done']);
    expect(progress).toBeGreaterThan(0);
    const a = (await call(sim, `/api/v1/client/request-status/${id}`)).body.data;
    nowMs += 2;
    const b = (await call(sim, `/api/v1/client/request-status/${id}`)).body.data;
    expect(a).toMatchObject({ status: 'done', progress: 100, results_alt_formats: null, result: null, preview: null });
    expect(a.result_url).toMatch(new RegExp(`^${sim.url}/results/${id}\\.wav\\?expires=\\d+&sig=[0-9a-f]{64}$`));
    expect(b.result_url).not.toBe(a.result_url);
    expect(sim.stats.jobsByStatus()).toEqual({ pending: 0, processing: 0, done: 1, error: 0 });
  });

  it('answers an unknown request id 404 with the Laravel message', async () => {
    sim = await startSimulator(FAST);
    const answer = await call(sim, '/api/v1/client/request-status/00000000-0000-0000-0000-000000000000');
    expect(answer).toMatchObject({ status: 404, body: { message: 'No query results for the requested resource.' } });
  });

  it('serves a real WAV without auth, then 403 once the URL expired or was tampered with', async () => {
    sim = await startSimulator({ ...FAST, resultUrlTtlMs: 150 });
    const id = (await submitAudio(sim)).body.data.request_id as string;
    const url = (await waitForEnd(sim, id)).body.data.result_url as string;
    const res = await fetch(url);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString()).toBe('WAVE');
    expect(bytes.readUInt32LE(24)).toBe(24000);

    // A whole new signature: swapping one hex digit fails one time in sixteen (when it was already that digit).
    const forged = await fetch(url.replace(/sig=[^&]*/, 'sig=forged'));
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('SignatureDoesNotMatch');
    await sleep(200);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('<Code>AccessDenied</Code>');
    const fresh = (await call(sim, `/api/v1/client/request-status/${id}`)).body.data.result_url as string;
    expect((await fetch(fresh)).status).toBe(200);
    expect(sim.stats.calls.download).toBe(4);
  });

  it('serves an MP4 stand-in for a video', async () => {
    sim = await startSimulator(FAST);
    const id = (await call(sim, '/api/v1/client/img2video', { form: videoForm() })).body.data.request_id as string;
    const res = await fetch((await waitForEnd(sim, id)).body.data.result_url as string);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await res.arrayBuffer()).subarray(4, 8).toString()).toBe('ftyp');
  });

  it('ends jobs in error with the error fields, refunding a retryable error', async () => {
    sim = await startSimulator({ ...FAST, jobErrorRate: 1, balanceUsd: 10 });
    const id = (await submitAudio(sim, { text: 'x'.repeat(5000) })).body.data.request_id as string;
    expect(sim.balanceUsd).toBeCloseTo(10 - 0.00385, 8);
    const data = (await waitForEnd(sim, id)).body.data;
    expect(data).toMatchObject({ status: 'error', retryable: true, refunded: true, result_url: null });
    expect(['WORKER_TIMEOUT', 'WORKER_ERROR', 'PROCESSING_ERROR']).toContain(data.error_code);
    expect(typeof data.error_message).toBe('string');
    expect(typeof data.error_reason).toBe('string');
    await sleep(5);
    expect((await call(sim, '/api/v1/client/balance')).body.data.balance).toBe(10);
    await sim.close();

    sim = await startSimulator({ ...FAST, jobErrorRate: 1, errorRetryable: false, balanceUsd: 10 });
    const lost = (await submitAudio(sim, { text: 'x'.repeat(5000) })).body.data.request_id as string;
    expect((await waitForEnd(sim, lost)).body.data).toMatchObject({ status: 'error', retryable: false, refunded: false });
    expect(sim.balanceUsd).toBeCloseTo(10 - 0.00385, 8);
  });

  it('reports fingerprints accepted twice, except resubmits after a refunded retryable error', async () => {
    sim = await startSimulator(FAST);
    const first = (await submitAudio(sim)).body.data.request_id;
    const again = (await submitAudio(sim)).body.data.request_id;
    await submitAudio(sim, { text: 'Something else.' });
    const dups = sim.stats.duplicates();
    expect(dups).toHaveLength(1);
    expect(dups[0]?.requestIds).toEqual([first, again]);
    expect(sim.stats.accepted).toHaveLength(3);
    expect(sim.stats.accepted[0]?.fingerprint).toBe(sim.stats.accepted[1]?.fingerprint);
    await sim.close();

    // The clock moves only when the test moves it: "still running" never depends on the machine's speed.
    let nowMs = Date.parse('2026-11-27T12:00:00Z');
    sim = await startSimulator({ ...FAST, jobErrorRate: 1, clock: { nowMs: () => nowMs } });
    const failed = (await submitAudio(sim)).body.data.request_id as string;
    nowMs += 1000;
    expect((await waitForEnd(sim, failed)).body.data.status).toBe('error');
    await submitAudio(sim);
    expect(sim.stats.duplicates()).toEqual([]);
    // Resubmitting while the first is still running is a duplicate, whatever it ends in.
    await submitAudio(sim, { text: 'Twice at once.' });
    await submitAudio(sim, { text: 'Twice at once.' });
    expect(sim.stats.duplicates()).toHaveLength(1);
  });

  it('with recordSent, keeps the sha256 of each field as sent by request id: a file\'s bytes, a text\'s UTF-8', async () => {
    const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
    sim = await startSimulator(FAST);
    await submitAudio(sim);
    expect(sim.stats.sent.size).toBe(0);
    await sim.close();

    sim = await startSimulator({ ...FAST, recordSent: true });
    const speech = (await submitAudio(sim, { text: 'Café, 3 €.' })).body.data.request_id as string;
    const video = (await call(sim, '/api/v1/client/img2video', { form: videoForm() })).body.data.request_id as string;
    expect(sim.stats.sent.get(speech)).toMatchObject({ text: sha256('Café, 3 €.'), voice: sha256('af_sky') });
    expect(sim.stats.sent.get(video)).toMatchObject({ first_frame_image: sha256(PNG), prompt: sha256('slow waves roll onto the beach') });
    // A refused submit was not accepted: nothing recorded for it.
    expect((await submitAudio(sim, { text: '' })).status).toBe(422);
    expect([...sim.stats.sent.keys()]).toEqual([speech, video]);
  });

  it('fails the jobs accepted after setJobErrorRate at that rate, and none once it is back to 0', async () => {
    sim = await startSimulator(FAST);
    sim.setJobErrorRate(1);
    const failing = (await submitAudio(sim, { text: 'One.' })).body.data.request_id as string;
    sim.setJobErrorRate(0);
    const healthy = (await submitAudio(sim, { text: 'Two.' })).body.data.request_id as string;
    expect((await waitForEnd(sim, failing)).body.data.status).toBe('error');
    expect((await waitForEnd(sim, healthy)).body.data.status).toBe('done');
    expect(() => sim.setJobErrorRate(2)).toThrow('simulator option jobErrorRate: expected 0–1, got 2');
  });

  it('gives the same fingerprint to a video whether its numbers came as strings or numbers', async () => {
    sim = await startSimulator(FAST);
    await call(sim, '/api/v1/client/img2video', { form: videoForm({ width: '768' }) });
    await call(sim, '/api/v1/client/img2video', { form: videoForm({ width: '768.0' }) });
    await call(sim, '/api/v1/client/img2video', { form: videoForm({ seed: 43 }) });
    expect(sim.stats.duplicates()).toHaveLength(1);
  });
});
