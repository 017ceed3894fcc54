import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { cliAgainst, collect, ledgerRows, startAgainst, type StatusJson } from '../reliability/helpers.js';
import { freePort, HOOK_URL, until } from './helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { eventsFor } from '../support/events.js';

const JOBS = 40;
const KILLS = 1;

describe('a webhook run killed while deliveries arrive', () => {
  const workspace = useWorkspace();

  it('resumes, listens again and takes the retried deliveries: nothing lost, sent twice or downloaded twice', async () => {
    const port = await freePort();
    // Jobs end over a few hundred ms, so deliveries are still coming when the run is killed; the
    // service retries a delivery nobody answered (compressed: every 100–300 ms, for a while).
    const sim = await workspace.startSim({
      pendingMs: { txt2audio: 30 },
      processingMs: { txt2audio: 400 },
      latencyMs: 20,
      webhookTarget: `http://127.0.0.1:${port}`,
      webhookRetryMs: 100,
      webhookRetryMaxMs: 300,
      webhookAttempts: 200,
    });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: JOBS });
    const db = path.join(workspace.dir, 'batch.mediabatch.db');
    const args = ['run', manifest, '--concurrency', '4', '--webhook-url', HOOK_URL, '--listen', `127.0.0.1:${port}`];
    const caughtSubmitting = new Set<string>();

    for (let kill = 0; kill < KILLS; kill += 1) {
      const delivered = sim.stats.webhooks.delivered;
      const child = startAgainst(sim, args);
      const ended = collect(child);
      await until(() => sim.stats.webhooks.delivered >= delivered + 8 || child.exitCode !== null, 30_000);
      child.kill('SIGKILL');
      const result = await ended;
      expect(result.signal, result.stderr).toBe('SIGKILL');
      for (const row of await ledgerRows(db)) if (row.state === 'submitting') caughtSubmitting.add(row.id);
    }
    // While nobody listens, deliveries fail and are retried: the next attempt comes within the
    // simulator's retry wait of the kill (waited for, rather than read at the moment of the kill).
    await until(() => (sim.stats.webhooks.answers['none'] ?? 0) > 0, 10_000);

    const deliveredBefore = sim.stats.webhooks.delivered;
    const final = await cliAgainst(sim, [...args, '--json']);
    expect(hasStackTrace(final.stderr), final.stderr).toBe(false);
    const summary = JSON.parse(final.stdout) as StatusJson;
    expect(final.code, final.stderr).toBe(caughtSubmitting.size === 0 ? 0 : 1);
    // The last run listened again and took retried deliveries.
    expect(sim.stats.webhooks.delivered).toBeGreaterThan(deliveredBefore);

    // Nothing sent twice; nothing lost: every job is done, or in doubt because a kill caught it mid-submit.
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.accepted.length).toBeLessThanOrEqual(JOBS);
    const inDoubt = summary.jobs.filter((j) => j.state === 'in_doubt').map((j) => j.id);
    expect(new Set(inDoubt)).toEqual(caughtSubmitting);
    expect(summary.counts.done + summary.counts.in_doubt).toBe(JOBS);

    // Nothing downloaded twice: one result file and one `done` per job, and no piece left over.
    const done = summary.jobs.filter((j) => j.state === 'done');
    const out = path.join(workspace.dir, 'batch.out');
    expect(readdirSync(out).sort()).toEqual(done.map((j) => path.basename(j.output ?? '')).sort());
    const ledger = await openSqliteLedger(db, { mode: 'read-only' });
    try {
      for (const job of done) {
        expect(existsSync(job.output ?? '')).toBe(true);
        expect((await eventsFor(ledger, job.id)).filter((e) => e.kind === 'done'), job.id).toHaveLength(1);
      }
      // A secret for each run.
      expect(await ledger.webhookRuns()).toHaveLength(KILLS + 1);
    } finally {
      await ledger.close();
    }
  });
});
