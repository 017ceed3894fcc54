import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { byState, collect, delay, FAST, ledgerRows, startAgainst } from './helpers.js';

describe('signals that end a terminal session', () => {
  const workspace = useWorkspace();

  it('SIGHUP (terminal or ssh session closed) stops like SIGTERM: answers in flight are recorded, exit 130', async () => {
    // Slow answers: the hang-up lands while accepted submits still wait for theirs.
    const sim = await workspace.startSim({ ...FAST, latencyMs: 400 });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 12 });
    const child = startAgainst(sim, ['run', manifest, '--concurrency', '4']);
    const ended = collect(child);
    const until = Date.now() + 30_000;
    while (sim.stats.accepted.length < 2 && Date.now() < until) await delay(5);
    expect(sim.stats.accepted.length).toBeGreaterThanOrEqual(2);
    child.kill('SIGHUP');
    const result = await ended;

    expect({ code: result.code, signal: result.signal }).toEqual({ code: 130, signal: null });
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.stderr).toContain('SIGHUP: stopping');
    const rows = ledgerRows(path.join(workspace.dir, 'batch.mediabatch.db'));
    const counts = byState(rows);
    expect(counts['submitting'] ?? 0).toBe(0);
    expect(counts['in_doubt'] ?? 0).toBe(0);
    // Every job the service took is in the ledger with its request id.
    const recorded = new Set(rows.map((row) => row.request_id));
    for (const accepted of sim.stats.accepted) expect(recorded.has(accepted.requestId)).toBe(true);
  });
});
