import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, ledgerRows, startAgainst } from './helpers.js';

/** How the process ended, without reading its output (whoever read it is gone). */
function exited(child: ChildProcess, timeoutMs = 60_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit by itself within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

describe('a reader of the output that goes away (`mediabatch run … 2>&1 | head -3`)', () => {
  const workspace = useWorkspace();

  it('does not stop the run: every job is recorded, nothing is left submitting or in doubt', async () => {
    // Failed jobs print a line each as they end, so the run writes to the closed pipes mid-run.
    const sim = await workspace.startSim({ ...FAST, latencyMs: 20, jobErrorRate: 0.3, errorRetryable: false, seed: 3 });
    const jobs = 40;
    const manifest = await writeTtsManifest(workspace.dir, { jobs });
    const child = startAgainst(sim, ['run', manifest, '--concurrency', '2']);
    const ended = exited(child);
    // Like `head -1`: read the first line of output, then close both pipes.
    await new Promise<void>((resolve) => child.stderr?.once('data', () => resolve()));
    child.stdout?.destroy();
    child.stderr?.destroy();

    // Some jobs failed at the service, so a finished run says 1; it must get there by itself.
    expect(await ended).toEqual({ code: 1, signal: null });
    const rows = await ledgerRows(path.join(workspace.dir, 'batch.mediabatch.db'));
    expect(rows).toHaveLength(jobs);
    const states = new Set(rows.map((row) => row.state));
    expect([...states].sort()).toEqual(['done', 'failed']);
    for (const row of rows) expect(row.request_id).not.toBeNull();
    expect(sim.stats.accepted).toHaveLength(jobs);
    expect(sim.stats.duplicates()).toEqual([]);
    // The run got to its end: the final report says so.
    const report = JSON.parse(readFileSync(path.join(workspace.dir, 'batch.run.json'), 'utf8')) as { finished: boolean };
    expect(report.finished).toBe(true);
  });
});
