/**
 * A pipeline run by the built CLI, killed with -9 in the middle of its graph (some images done,
 * some still at the service, the first videos just sent), then resumed: no job is sent twice,
 * and a video whose image finished while the runner was down is sent on resume.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { useWorkspace } from '../helpers/workspace.js';
import { byState, cliAgainst, collect, delay, ledgerRows, startAgainst, type StatusJson } from '../reliability/helpers.js';

const CHAINS = 6;

const DEFAULTS = [
  'defaults:',
  '  txt2img: { model: Flux1schnell, width: 512, height: 512, guidance: 0, steps: 4, seed: 7 }',
  '  img2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 }',
];

/** CHAINS images, each animated by a video of its own: every job's content differs, so the simulator tells each apart. */
async function writeChains(dir: string): Promise<string> {
  const jobs: string[] = [];
  for (let i = 1; i <= CHAINS; i += 1) {
    jobs.push(`  - { id: still-${i}, type: txt2img, prompt: "lighthouse number ${i} at dusk" }`);
    jobs.push(`  - { id: clip-${i}, type: img2video, prompt: "waves below lighthouse ${i}", first_frame_image: { from: still-${i} } }`);
  }
  const file = path.join(dir, 'chains.yaml');
  await writeFile(file, ['version: 1', ...DEFAULTS, 'jobs:', ...jobs, ''].join('\n'));
  return file;
}

describe('a pipeline killed with -9 mid-graph', () => {
  const workspace = useWorkspace();

  it('resumes with nothing sent twice; a video whose image finished while the runner was down is sent on resume', async () => {
    const manifest = await writeChains(workspace.dir);
    // Images take long enough at the service that, when the first video goes out, later images are still being made.
    const sim = await workspace.startSim({
      pendingMs: { txt2img: 20, img2video: 20 },
      processingMs: { txt2img: 400, img2video: 200 },
      latencyMs: 40,
    });
    const db = path.join(workspace.dir, 'chains.mediabatch.db');
    const child = startAgainst(sim, ['run', manifest, '--concurrency', '1']);
    let over = false;
    const ended = collect(child).finally(() => (over = true));
    while (!sim.stats.accepted.some((job) => job.type === 'img2video') && !over) await delay(5);
    child.kill('SIGKILL');
    const killed = await ended;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const acceptedBeforeKill = sim.stats.accepted.length;
    expect(acceptedBeforeKill).toBeLessThan(2 * CHAINS);
    const atKill = await ledgerRows(db);
    const caughtSubmitting = atKill.filter((row) => row.state === 'submitting').map((row) => row.id);
    // Images the service had taken and the runner had not yet collected.
    const waiting = atKill.filter((row) => row.id.startsWith('still-') && row.state === 'submitted').map((row) => row.id);
    expect(waiting.length, JSON.stringify(atKill)).toBeGreaterThan(0);

    // Everything the service took ends while the runner is down.
    while (sim.stats.jobsByStatus().pending + sim.stats.jobsByStatus().processing > 0) await delay(10);

    const resumed = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(hasStackTrace(resumed.stderr), resumed.stderr).toBe(false);
    expect(sim.stats.duplicates()).toEqual([]);
    const summary = JSON.parse(resumed.stdout) as StatusJson;
    const stateOf = (id: string): string | undefined => summary.jobs.find((job) => job.id === id)?.state;
    // Only a job caught between its reservation and its answer is in doubt, and a video waits (blocked) on an image in doubt.
    const blockedBy = caughtSubmitting.filter((id) => id.startsWith('still-')).map((id) => id.replace('still-', 'clip-'));
    expect(summary.jobs.filter((job) => job.state === 'in_doubt').map((job) => job.id).sort()).toEqual([...caughtSubmitting].sort());
    expect(summary.jobs.filter((job) => job.state === 'blocked').map((job) => job.id).sort()).toEqual(blockedBy.sort());
    expect(byState(await ledgerRows(db))['done']).toBe(2 * CHAINS - caughtSubmitting.length - blockedBy.length);
    expect(resumed.code, resumed.stderr).toBe(caughtSubmitting.length === 0 ? 0 : 1);

    // Each job the service took, it took once; the videos of the images that finished while the runner was down went out on resume.
    expect(sim.stats.accepted.length).toBeLessThanOrEqual(2 * CHAINS);
    const requestOf = (id: string): string | null | undefined => summary.jobs.find((job) => job.id === id)?.request_id;
    for (const still of waiting) {
      const clip = still.replace('still-', 'clip-');
      expect(stateOf(still)).toBe('done');
      expect(stateOf(clip), clip).toBe('done');
      const index = sim.stats.accepted.findIndex((job) => job.requestId === requestOf(clip));
      expect(index, clip).toBeGreaterThanOrEqual(acceptedBeforeKill);
    }
  });
});
