import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { limitsOf } from '../../src/runner/index.js';
import { Pace, planPace } from '../../src/runner/pace.js';
import { runInProcessResult } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mp3Frames } from '../support/media-files.js';

/**
 * The plan's "minute", scaled down: Basic allows one transcription submit in it, whatever the kind.
 * Not below a second: the pace waits at least that long after a window's last request.
 */
const WINDOW_MS = 1000;
const FAST = {
  pendingMs: { aud2txt: 10, audiofile2txt: 10 },
  processingMs: { aud2txt: 20, audiofile2txt: 20 },
  latencyMs: 1,
};

describe('kinds that share one budget share one pace', () => {
  const workspace = useWorkspace();

  it('two transcription kinds together stay within the one shared limit of a window', async () => {
    await writeFile(path.join(workspace.dir, 'a.mp3'), mp3Frames(2));
    const file = path.join(workspace.dir, 'talks.yaml');
    const jobs = [
      '{ id: s1, type: aud2txt, audio_url: "https://twitter.com/i/spaces/1" }',
      '{ id: f1, type: audiofile2txt, audio: a.mp3 }',
      '{ id: s2, type: aud2txt, audio_url: "https://twitter.com/i/spaces/2" }',
      '{ id: f2, type: audiofile2txt, audio: a.mp3, include_ts: true }',
    ];
    const defaults = ['aud2txt', 'audiofile2txt'].map((kind) => `  ${kind}: { model: WhisperLargeV3, include_ts: false }`);
    const lines = ['version: 1', 'defaults:', ...defaults, 'jobs:', ...jobs.map((job) => `  - ${job}`)];
    await writeFile(file, `${lines.join('\n')}\n`);
    // The simulator counts the shared budget as the service does, and answers 429 past it.
    const sim = await workspace.startSim({ ...FAST, plan: 'basic', rateWindowMs: WINDOW_MS });
    // Basic's own limits, in the scaled window; some headroom, so network jitter never crosses a window's edge.
    const pace = new Pace(planPace(limitsOf('basic'), WINDOW_MS), { headroom: 0.8 });
    const outDir = path.join(workspace.dir, 'talks.out');
    const ledgerPath = path.join(workspace.dir, 'talks.mediabatch.db');
    const run = { manifest: file, ledgerPath, outDir, baseUrl: sim.url, token: sim.token, pace };
    const { result } = await runInProcessResult(run);

    expect(result.summary.spentMicro).toBeGreaterThan(0);
    const accepted = sim.stats.accepted;
    expect(accepted.map((job) => job.type).sort()).toEqual(['aud2txt', 'aud2txt', 'audiofile2txt', 'audiofile2txt']);
    // Never two submits in one window, and not one refused: paced as one class, not one each.
    const windows = accepted.map((job) => Math.floor(job.at / WINDOW_MS));
    expect(new Set(windows).size).toBe(4);
    expect(sim.stats.rateLimited).toEqual({});
  });

  it('the simulator counts every transcription kind in one budget', async () => {
    const sim = await workspace.startSim({ plan: 'basic', rateWindowMs: 60_000 });
    const submit = (kind: string, body: object) =>
      fetch(`${sim.url}/api/v1/client/${kind}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ model: 'WhisperLargeV3', include_ts: false, ...body }),
      });
    expect((await submit('aud2txt', { audio_url: 'https://twitter.com/i/spaces/1' })).status).toBe(200);
    const second = await submit('vid2txt', { video_url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw' });
    expect(second.status).toBe(429);
    expect(sim.stats.rateLimited).toEqual({ 'submit:transcribe': 1 });
  });
});
