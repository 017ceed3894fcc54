import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planLimits } from '../../src/jobs/plans.js';
import { Pace, planPace } from '../../src/runner/pace.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { startWebhookRun } from './helpers.js';

/** The Basic plan's limits with its minute scaled down to this many milliseconds (the daily caps stay). */
const WINDOW_MS = 60;
const JOBS = 300;

describe('following by webhooks on the Basic plan', () => {
  const workspace = useWorkspace();

  it(`sends, follows and downloads ${JOBS} speech jobs with at most 10 status calls`, async () => {
    // The simulator enforces Basic as it is, its minute scaled down: 5 speech submits and 50
    // status and price calls a window, 300 submits and 200 status calls a day.
    const sim = await workspace.startSim({
      plan: 'basic',
      rateWindowMs: WINDOW_MS,
      pendingMs: { txt2audio: 20 },
      processingMs: { txt2audio: 60 },
      faults: 'webhook:duplicate=0.05,webhook:reorder=0.05',
    });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: JOBS });
    // The runner keeps Basic's pace but sends 4 speech submits a window, not 5: a window it fills
    // makes the pace wait a whole second (X-RateLimit-Remaining 0), sixty times over here.
    const pace = new Pace({ ...planPace(planLimits('basic'), WINDOW_MS), 'submit:txt2audio': { perWindow: 4, windowMs: WINDOW_MS } });
    const hooked = await startWebhookRun({ sim, manifest, pace });
    try {
      const { summary, outcome } = await hooked.done;
      expect(outcome?.execute.fatal).toBeUndefined();
      expect(summary.counts).toMatchObject({ done: JOBS, submitted: 0, failed: 0, in_doubt: 0 });
      for (const job of summary.jobs) expect(existsSync(job.output ?? '')).toBe(true);
      // Every job was taken once, followed by its deliveries: a daily status budget of 200 is not touched.
      expect(sim.stats.accepted).toHaveLength(JOBS);
      expect(sim.stats.duplicates()).toEqual([]);
      expect(sim.stats.calls.status).toBeLessThanOrEqual(10);
      expect(sim.stats.rateLimited['status'] ?? 0).toBe(0);
      expect(sim.stats.webhooks.faults['duplicate'] ?? 0).toBeGreaterThan(0);
      const summaryEvent = hooked.events.find((e) => e.kind === 'webhooks_summary');
      expect(summaryEvent).toMatchObject({ kind: 'webhooks_summary', rejected: 0 });
      expect((summaryEvent as { duplicates: number }).duplicates).toBeGreaterThan(0);
      expect(sim.stats.calls.download).toBe(JOBS);
    } finally {
      await hooked.ledger.close();
    }
  });
});
