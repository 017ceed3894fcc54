import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { Pace } from '../../src/runner/pace.js';
import type { Simulator } from '../../src/sim/index.js';

type AcceptedJob = Simulator['stats']['accepted'][number];
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

const SPEECH = 'txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }';
const IMAGES = 'txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, guidance: 0, seed: 1 }';

/** `speech` speech jobs first, then `images` image jobs, in that manifest order. */
function mixedManifest(speech: number, images: number): string {
  const jobs = [
    ...Array.from({ length: speech }, (_, i) => `  - { id: s${i}, type: txt2audio, text: "line ${i}" }`),
    ...Array.from({ length: images }, (_, i) => `  - { id: i${i}, type: txt2img, prompt: "picture ${i}" }`),
  ];
  return ['version: 1', 'defaults:', `  ${SPEECH}`, `  ${IMAGES}`, 'jobs:', ...jobs, ''].join('\n');
}

const acceptedAt = (accepted: readonly AcceptedJob[], type: string): number[] =>
  accepted.filter((a) => a.type === type).map((a) => a.at);

describe('classes side by side', () => {
  const workspace = useWorkspace();

  async function runMixed(input: { speech: number; images: number; pace: Pace; sim?: Parameters<typeof workspace.startSim>[0] }) {
    const sim = await workspace.startSim(input.sim);
    const manifest = path.join(workspace.dir, 'mixed.yaml');
    await writeFile(manifest, mixedManifest(input.speech, input.images));
    const events = await runInProcess({
      manifest,
      ledgerPath: path.join(workspace.dir, 'mixed.mediabatch.db'),
      ledger: openMemoryLedger(),
      outDir: path.join(workspace.dir, 'mixed.out'),
      baseUrl: sim.url,
      token: sim.token,
      pace: input.pace,
      concurrency: 2,
      noWait: true,
    });
    return { events, accepted: sim.stats.accepted, sim };
  }

  it('a fast class listed after a slow one goes out while the slow one waits for its pace', async () => {
    // Speech at 8 a second, images unpaced; two workers, and more speech jobs than workers.
    const pace = new Pace({ 'submit:txt2audio': { perWindow: 8, windowMs: 1000 } }, { headroom: 1 });
    const { accepted } = await runMixed({ speech: 6, images: 4, pace });

    const speech = acceptedAt(accepted, 'txt2audio');
    const images = acceptedAt(accepted, 'txt2img');
    expect([speech.length, images.length]).toEqual([6, 4]);
    // Every image is taken before the third speech job: none waited behind the speech pace.
    expect(Math.max(...images)).toBeLessThan(speech[2]!);
    // Within a class, the manifest's order.
    expect(accepted.filter((a) => a.type === 'txt2audio').map((a) => a.at)).toEqual([...speech].sort((a, b) => a - b));
  });

  it('a class paused by a 429 does not hold up the others', async () => {
    // The service allows 2 speech submits a window of 2 s, the runner thinks 100: five sent at once
    // outrun the windows, so one at least draws a 429 and the class pauses (the one-second pause
    // that an exhausted window makes is shorter than the window).
    const pace = new Pace({ 'submit:txt2audio': { perWindow: 100, windowMs: 2000 } });
    const { events, accepted } = await runMixed({
      speech: 5,
      images: 6,
      pace,
      sim: { rateWindowMs: 2000, rateLimits: { 'submit:txt2audio': { perWindow: 2 } } },
    });

    const notTaken = events.flatMap((e) => (e.kind === 'not_taken' ? [e.id] : []));
    expect(notTaken.length).toBeGreaterThan(0);
    expect(notTaken.every((id) => id.startsWith('s'))).toBe(true);
    expect([acceptedAt(accepted, 'txt2audio').length, acceptedAt(accepted, 'txt2img').length]).toEqual([5, 6]);
    // The images all went out during the pause: before the first job turned away was taken.
    const requestOf = new Map(events.flatMap((e) => (e.kind === 'submitted' ? [[e.id, e.requestId] as const] : [])));
    const retakenAt = accepted.find((a) => a.requestId === requestOf.get(notTaken[0]!))?.at;
    expect(Math.max(...acceptedAt(accepted, 'txt2img'))).toBeLessThan(retakenAt!);
  });

  it('a class at its daily limit under --no-wait stops alone: the other classes send everything', async () => {
    const { events, accepted } = await runMixed({
      speech: 4,
      images: 3,
      pace: new Pace({}),
      sim: { rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 2 } } },
    });

    expect([acceptedAt(accepted, 'txt2audio').length, acceptedAt(accepted, 'txt2img').length]).toEqual([2, 3]);
    expect(events.filter((e) => e.kind === 'not_taken').length).toBeGreaterThan(0);
  });
});
