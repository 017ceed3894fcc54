import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockFrom } from '../helpers/clock.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { TimeLeft, type RateView } from '../../src/cli/progress.js';
import { unlimitedPlan } from '../../src/jobs/plans.js';
import { createRunProgress } from '../../src/runner/index.js';
import { Pace } from '../../src/runner/pace.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

const MANIFEST = [
  'version: 1',
  'defaults:',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  '  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, guidance: 0, seed: 1 }',
  'jobs:',
  ...Array.from({ length: 20 }, (_, i) => `  - { id: s${i}, type: txt2audio, text: "line ${i}" }`),
  ...Array.from({ length: 20 }, (_, i) => `  - { id: i${i}, type: txt2img, prompt: "picture ${i}" }`),
  '',
].join('\n');

describe('the ETA of a paced run', () => {
  const workspace = useWorkspace();

  it('is within 10 % of the time the run then takes, with its classes paced side by side', async () => {
    // Speech at 5 submits a second, images at 10 (a plan's minute scaled to a second), on a clock
    // that reads 23:30 UTC whatever the real hour: nothing here depends on the time of day.
    const clock = clockFrom('2026-11-27T23:30:00Z');
    const sim = await workspace.startSim({ clock });
    const manifest = path.join(workspace.dir, 'eta.yaml');
    await writeFile(manifest, MANIFEST);
    const pace = new Pace({ 'submit:txt2audio': { perWindow: 5, windowMs: 1000 }, 'submit:txt2img': { perWindow: 10, windowMs: 1000 } }, { clock });
    const limits = { ...unlimitedPlan(), 'submit:txt2audio': { perMinute: 300 }, 'submit:txt2img': { perMinute: 600 }, status: { perMinute: 600 } };
    const progress = createRunProgress();
    const time = new TimeLeft({ limits, name: 'scaled' }, progress, clock, false);
    let speechSent = 0;
    let sample: { atMs: number; etaMs: number | undefined; rate: RateView } | undefined;
    let lastSubmitMs = 0;
    await runInProcess({
      manifest,
      ledgerPath: path.join(workspace.dir, 'eta.mediabatch.db'),
      ledger: openMemoryLedger(),
      outDir: path.join(workspace.dir, 'eta.out'),
      baseUrl: sim.url,
      token: sim.token,
      pace,
      clock,
      noWait: true,
      progress,
      onEvent: (event) => {
        time.onEvent(event);
        if (event.kind !== 'submitted') return;
        lastSubmitMs = clock.nowMs();
        if (event.id.startsWith('s')) speechSent += 1;
        if (speechSent === 5 && sample === undefined) {
          // As the progress line asks: every job not settled (under --no-wait, none settles).
          const view = time.view(clock.nowMs(), 40);
          sample = { atMs: clock.nowMs(), etaMs: view.etaMs, rate: view.rate };
        }
      },
    });

    expect(sample?.rate.what).toBe('submits');
    const remainingMs = lastSubmitMs - sample!.atMs;
    // Fifteen speech submits left at 5 a second: about 3 s, the images long done by then.
    expect(remainingMs).toBeGreaterThan(2_000);
    expect(Math.abs(sample!.etaMs! - remainingMs)).toBeLessThanOrEqual(remainingMs * 0.1);
  });
});
