import { describe, expect, it } from 'vitest';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { delay, deliveryBody, post, signed, startWebhookRun, until, outcomes } from './helpers.js';

/** Deliveries fail until the test points the simulator at the receiver; then the retries arrive. */
const HELD = { pendingMs: { txt2audio: 10 }, processingMs: { txt2audio: 20 }, webhookRetryMs: 50, webhookRetryMaxMs: 100, webhookAttempts: 400 };

describe('a delivery that needs the status endpoint asks it once, through the poller\'s code', () => {
  const workspace = useWorkspace();

  it('a job.completed whose result URL expired meanwhile is refreshed through the status endpoint', async () => {
    const sim = await workspace.startSim({ ...HELD, resultUrlTtlMs: 800 });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const hooked = await startWebhookRun({ sim, manifest, deliver: false });
    try {
      const address = await hooked.address;
      await until(async () => (await hooked.ledger.countsByState()).submitted === 2);
      // The deliveries' URLs were signed when the jobs ended: by now they have expired.
      await delay(1000);
      sim.setWebhookTarget(`http://${address}`);
      const { summary } = await hooked.done;
      expect(summary.counts.done).toBe(2);
      expect(sim.stats.calls.status).toBe(2);
    } finally {
      await hooked.ledger.close();
    }
  });

  it('a job.failed without retryable and refunded is asked about once; one with them is not', async () => {
    const sim = await workspace.startSim({ ...HELD, jobErrorRate: 1, errorRetryable: false });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const hooked = await startWebhookRun({ sim, manifest, deliver: false });
    try {
      const address = await hooked.address;
      await until(async () => (await hooked.ledger.countsByState()).submitted === 2);
      // Told of a failure the service has really recorded: its status call must find it ended.
      await until(() => sim.stats.jobsByStatus().error === 2);
      const secret = (await hooked.ledger.webhookRuns()).at(-1)?.secret ?? '';
      const [first] = await outcomes(hooked.ledger);
      // As the service documents a failure: a code and a message, nothing about a refund.
      const failed = deliveryBody('job.failed', first!.requestId!, 'd-failed', { status: 'error', error_code: 'UNKNOWN_ERROR', error_message: 'as documented' });
      expect((await post(address, failed, signed(secret, failed))).status).toBe(200);
      await until(async () => (await hooked.ledger.getJob(first!.id))?.state === 'failed');
      expect(sim.stats.calls.status).toBe(1);
      sim.setWebhookTarget(`http://${address}`);
      const { summary } = await hooked.done;
      expect(summary.counts.failed).toBe(2);
      // The reason is what the status endpoint said, the rules the poller's: not refunded, failed for good.
      const reasons = summary.jobs.map((job) => job.error);
      expect(reasons[0]).not.toContain('as documented');
      expect(reasons[0]).toMatch(/^(WORKER_TIMEOUT|WORKER_ERROR|PROCESSING_ERROR): /);
      expect(sim.stats.calls.status).toBe(1);
    } finally {
      await hooked.ledger.close();
    }
  });
});
