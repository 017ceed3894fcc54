import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadManifest } from '../support/load-manifest.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import { FIXTURES } from './helpers.js';

/** Every example manifest in manifests/. */
const EXAMPLES = readdirSync('manifests').filter((name) => name.endsWith('.yaml')).map((name) => name.replace(/\.yaml$/, ''));

describe('valid manifests', () => {
  test('every field, optional ones included, resolves with defaults merged under each job', async () => {
    const manifest = await loadManifest(`${FIXTURES}/valid/full.yaml`);
    expect(manifest.path).toBe(resolve(FIXTURES, 'valid/full.yaml'));
    expect(manifest.displayPath).toBe(`${FIXTURES}/valid/full.yaml`);
    expect(manifest.budgetUsd).toBe(12.5);
    const [hello, fromFile, dusk, fog] = manifest.jobs as [ResolvedJob, ResolvedJob, ResolvedJob, ResolvedJob];
    expect(hello).toMatchObject({ id: 'hello', idDerived: false, index: 0, text: 'Hello.', textChars: 6 });
    expect(hello.params).toEqual({ model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 });
    // The job's own values win over defaults, field by field.
    expect(fromFile.params).toEqual({ model: 'Kokoro', voice: 'bf_emma', lang: 'en-gb', speed: 1.25, format: 'flac', sample_rate: 48000 });
    expect(fromFile).toMatchObject({ idDerived: true, textFile: 'scripts/hello.txt', text: 'Ünïcödé text with an emoji 🎧.\n' });
    expect(fromFile.id).toMatch(/^txt2audio-[0-9a-f]{16}$/);
    // Code points, as the service counts: the emoji is one character, not two UTF-16 units.
    expect(fromFile.textChars).toBe(30);
    expect(dusk.params).toEqual({
      model: 'Ltx2_3_22B_Dist_INT8', prompt: 'the day turns to dusk', negative_prompt: 'people',
      width: 512, height: 512, steps: 4, frames: 49, fps: 24, guidance: 1.5, seed: 0,
    });
    expect(dusk.media['first_frame_image']).toMatchObject({ written: 'images/beach.png', path: resolve(FIXTURES, 'valid/images/beach.png'), contentType: 'image/png' });
    expect(dusk.media['last_frame_image']).toMatchObject({ written: 'images/beach-dusk.png', contentType: 'image/png' });
    expect(dusk.media['first_frame_image']?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(fog.params).toMatchObject({ negative_prompt: 'blurry', steps: 8, frames: 97 });
    expect(fog.media['first_frame_image']?.contentType).toBe('image/jpeg');
    expect(fog.media['last_frame_image']).toBeUndefined();
  });

  test('field positions point at each value, in defaults when it came from there', async () => {
    const manifest = await loadManifest(`${FIXTURES}/valid/full.yaml`);
    const [hello, fromFile] = manifest.jobs;
    expect(hello?.position).toEqual({ line: 17, col: 5 });
    expect(hello?.fieldPositions['text']).toEqual({ line: 19, col: 11 });
    expect(hello?.fieldPositions['voice']).toEqual({ line: 5, col: 38, fromDefaults: true });
    expect(fromFile?.fieldPositions['voice']).toEqual({ line: 23, col: 12 });
  });

  test('a manifest without defaults, budget or ids', async () => {
    const manifest = await loadManifest(`${FIXTURES}/valid/no-defaults.yaml`);
    expect(manifest.budgetUsd).toBeUndefined();
    expect(manifest.jobs.map((job) => job.type)).toEqual(['txt2audio']);
  });

  test.each(EXAMPLES)('the example manifests/%s.yaml is valid', async (name) => {
    const manifest = await loadManifest(`manifests/${name}.yaml`);
    expect(manifest.jobs.length).toBeGreaterThan(0);
  });

  test('demo.yaml has about 8 speech jobs, 2 videos and a budget of 5.00', async () => {
    const manifest = await loadManifest('manifests/demo.yaml');
    expect(manifest.budgetUsd).toBe(5);
    expect(manifest.jobs.filter((job) => job.type === 'txt2audio')).toHaveLength(8);
    expect(manifest.jobs.filter((job) => job.type === 'img2video')).toHaveLength(2);
  });
});
