import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, startAgainst } from '../reliability/helpers.js';
import { useWorkspace } from '../helpers/workspace.js';

/** The service's daily cap (Basic: 300 speech submits a day): the run must wait or say when to return. */
describe('a daily limit reached mid-run', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });

  it('with --no-wait: exit 1, says when to run again, and the rest stays pending, not in doubt', async () => {
    sim = await workspace.startSim({ ...FAST, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 3 } } });
    const manifest = await writeTtsManifest(dir, { jobs: 8 });
    const result = await cliAgainst(sim, ['run', manifest, '--no-wait']);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/daily limit is reached; run the same command again to resume: .* after \d{4}-\d\d-\d\dT00:00:00/);
    expect(byState(await ledgerRows(`${dir}/batch.mediabatch.db`))).toEqual({ submitted: 3, pending: 5 });
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('without --no-wait: pauses the class and keeps the jobs pending; a stop then leaves nothing in doubt', async () => {
    sim = await workspace.startSim({ ...FAST, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 2 } } });
    const manifest = await writeTtsManifest(dir, { jobs: 6 });
    const child = startAgainst(sim, ['run', manifest]);
    const ended = collect(child);
    // Two are taken, the third draws the daily 429: the run now waits for 00:00 UTC.
    for (let waited = 0; sim.stats.rateLimited['submit:txt2audio'] === undefined && waited < 10_000; waited += 50) await delay(50);
    await delay(300);
    child.kill('SIGTERM');
    const result = await ended;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/paused .* daily limit reached/);
    const counts = byState(await ledgerRows(`${dir}/batch.mediabatch.db`));
    expect(counts.in_doubt).toBeUndefined();
    expect(counts.pending).toBe(4);
    expect(sim.stats.accepted).toHaveLength(2);
  });
});
