import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/store/index.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { startScripted } from '../security/servers.js';
import { deliveryBody, post, signed, startWebhookRun, until, outcomes } from './helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { eventsFor } from '../support/events.js';

/** A secret an earlier run of the same manifest used: its jobs' retried deliveries are signed with it. */
const EARLIER_SECRET = 'e'.repeat(48) + '-earlier-run-secret';
const OTHER_MANIFEST_SECRET = 'o'.repeat(48) + '-other-manifest-secret';
const STRANGER_SECRET = 's'.repeat(64);

/** What a delivery may change about the jobs: their rows and each one's event log. */
async function jobsSnapshot(ledger: Ledger): Promise<string> {
  const jobs = await outcomes(ledger);
  const events = await Promise.all(jobs.map(async (job) => (await eventsFor(ledger, job.id)).length));
  return JSON.stringify({ jobs, events });
}

describe('the webhook receiver refuses what it cannot verify, and the run goes on', () => {
  const workspace = useWorkspace();

  it('forged, wrongly signed, stale, future, replayed, foreign, oversized and non-JSON deliveries change nothing', async () => {
    // Deliveries fail (nobody is pointed at) until the attacks are over, then the retries arrive.
    const sim = await workspace.startSim({ pendingMs: { txt2audio: 10 }, processingMs: { txt2audio: 20 }, webhookRetryMs: 50, webhookRetryMaxMs: 200, webhookAttempts: 200 });
    const attacker = await startScripted(() => ({ status: 200, headers: { 'content-type': 'audio/wav' }, body: 'not a result' }));
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 3 });
    const ledgerPath = path.join(workspace.dir, 'batch.mediabatch.db');
    const before = await openSqliteLedger(ledgerPath, { mode: 'read-write' });
    await before.addWebhookRun(EARLIER_SECRET);
    await before.close();
    // Another manifest's ledger, with a job the service finished for it.
    const other = await openSqliteLedger(path.join(workspace.dir, 'other.mediabatch.db'), { mode: 'read-write' });
    await other.addWebhookRun(OTHER_MANIFEST_SECRET);
    await other.close();

    const hooked = await startWebhookRun({ sim, manifest, deliver: false, silenceMs: 60_000 });
    const { ledger } = hooked;
    try {
      const address = await hooked.address;
      await until(async () => (await ledger.countsByState()).submitted === 3);
      const secret = (await ledger.webhookRuns()).at(-1)?.secret ?? '';
      expect(secret).toHaveLength(64);
      const [a, b] = (await outcomes(ledger)).map((job) => job.requestId ?? '');
      const forgedResult = { result_url: `${attacker.url}/evil.wav`, status: 'done' };
      const completed = deliveryBody('job.completed', a!, 'd-forged', forgedResult);
      const unchanged = await jobsSnapshot(ledger);

      const attempt = async (what: string, sent: Promise<{ status: number | undefined }>, status: number): Promise<void> => {
        expect({ what, status: (await sent).status }).toEqual({ what, status });
        expect(await jobsSnapshot(ledger), what).toBe(unchanged);
      };
      await attempt('forged signature', post(address, completed, { ...signed(secret, completed), 'x-deapi-signature': `sha256=${'ab'.repeat(32)}` }), 401);
      await attempt('no signature', post(address, completed, { 'x-deapi-timestamp': String(Math.floor(Date.now() / 1000)) }), 401);
      await attempt('wrong secret', post(address, completed, signed(STRANGER_SECRET, completed)), 401);
      await attempt('stale timestamp', post(address, completed, signed(secret, completed, Math.floor(Date.now() / 1000) - 302)), 401);
      await attempt('future timestamp', post(address, completed, signed(secret, completed, Math.floor(Date.now() / 1000) + 302)), 401);
      // Signed by the run that sent the job, or nobody: an earlier run's secret does not speak for it.
      await attempt('earlier run\'s secret', post(address, completed, signed(EARLIER_SECRET, completed)), 401);
      await attempt('another manifest\'s secret', post(address, completed, signed(OTHER_MANIFEST_SECRET, completed)), 401);
      await attempt('a signed body with its job swapped', post(address, completed.replace(a!, b!), signed(secret, completed)), 401);
      await attempt('delivery id header changed', post(address, completed, { ...signed(secret, completed), 'x-deapi-delivery-id': 'd-other' }), 401);
      await attempt('10 MB body', post(address, Buffer.alloc(10 * 1024 * 1024, 0x20), signed(secret, 'x')), 413);
      const notJson = 'job.completed for everyone';
      await attempt('not JSON', post(address, notJson, signed(secret, notJson)), 400);
      await attempt('another path', post(address, completed, signed(secret, completed), '/elsewhere'), 404);
      // A job of another manifest, signed by this run (the service's delivery for a request this
      // ledger never made): taken, so the service stops retrying, and it changes nothing.
      const foreign = deliveryBody('job.completed', '6f1b2c3d-0000-4000-8000-000000000000', 'd-foreign', forgedResult);
      await attempt('a job this ledger does not know', post(address, foreign, signed(secret, foreign)), 200);
      await attempt('the same delivery again', post(address, foreign, signed(secret, foreign)), 200);

      // A real delivery is applied once; its replay (the same bytes and headers) changes nothing more.
      const processing = deliveryBody('job.processing', a!, 'd-processing');
      const headers = signed(secret, processing);
      expect((await post(address, processing, headers)).status).toBe(200);
      const noted = await jobsSnapshot(ledger);
      expect(noted).not.toBe(unchanged);
      expect((await post(address, processing, headers)).status).toBe(200);
      expect(await jobsSnapshot(ledger)).toBe(noted);

      // A signed body without delivery_id is keyed by its own bytes: another header id does not make it new.
      const unnamed = JSON.stringify({ event: 'job.processing', data: { job_request_id: b!, job_type: 'txt2audio' } });
      const unnamedHeaders = signed(secret, unnamed);
      expect((await post(address, unnamed, { ...unnamedHeaders, 'x-deapi-delivery-id': 'h-first' })).status).toBe(200);
      const notedOnce = await jobsSnapshot(ledger);
      expect(notedOnce).not.toBe(noted);
      expect((await post(address, unnamed, { ...unnamedHeaders, 'x-deapi-delivery-id': 'h-second' })).status).toBe(200);
      expect(await jobsSnapshot(ledger)).toBe(notedOnce);

      // The run was not disturbed: its own deliveries arrive now and settle every job.
      expect((await ledger.countsByState()).submitted).toBe(3);
      sim.setWebhookTarget(`http://${address}`);
      const { summary } = await hooked.done;
      expect(summary.counts.done).toBe(3);
      for (const job of summary.jobs) expect(existsSync(job.output ?? '')).toBe(true);
      expect(attacker.received).toEqual([]);
      expect(sim.stats.calls.status).toBe(0);

      // Each refusal is counted and said, with its reason and never a secret or a signature.
      const refusals = hooked.events.filter((e) => e.kind === 'webhook_rejected');
      expect(refusals.map((r) => (r as { status: number }).status)).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 401, 413, 400, 404]);
      // The foreign delivery changed nothing; its second copy and the two replays were seen before.
      expect(hooked.events.find((e) => e.kind === 'webhooks_summary')).toMatchObject({ rejected: 12, duplicates: 3 });
      const logged = (await eventsFor(ledger, null)).filter((e) => e.kind === 'webhook_rejected');
      expect(logged).toHaveLength(12);
      expect(logged[3]?.detail).toMatchObject({ status: 401, reason: expect.stringMatching(/^the timestamp is 30[23] s in the past \(at most 300 s either way\)$/) });
      expect(logged[4]?.detail).toMatchObject({ status: 401, reason: expect.stringMatching(/^the timestamp is 30[12] s in the future/) });
      const said = JSON.stringify([refusals, logged]);
      for (const leak of [secret, EARLIER_SECRET, OTHER_MANIFEST_SECRET, STRANGER_SECRET, 'ab'.repeat(32), headers['x-deapi-signature']!]) expect(said).not.toContain(leak);
    } finally {
      hooked.stop.abort();
      await hooked.done.catch(() => undefined);
      await ledger.close();
      await attacker.close();
    }
  });
});
