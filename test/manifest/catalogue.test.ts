import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import type { Model } from '../../src/api/types.js';
import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifest } from '../support/load-manifest.js';
import { FIXTURES } from './helpers.js';

/** Every example manifest in manifests/. */
const EXAMPLES = readdirSync('manifests').filter((name) => name.endsWith('.yaml')).map((name) => name.replace(/\.yaml$/, ''));

// The simulator's catalogue as docs/service.md describes it, written by hand.
async function models(): Promise<Model[]> {
  return JSON.parse(await readFile(`${FIXTURES}/catalogue/models.json`, 'utf8')) as Model[];
}

/** What reading `path` against the catalogue `catalogue` reports; an empty list when it passes. */
async function problems(path: string, catalogue: Model[]): Promise<ManifestError['issues'] & { message?: string }> {
  try {
    await loadManifest(path, { models: catalogue });
    return [];
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return Object.assign(error.issues, { message: error.message });
  }
}

describe('checks against the catalogue', () => {
  test('reports models, types, languages, voices, bounds and last frames, with hints', async () => {
    const found = await problems(`${FIXTURES}/catalogue/problems.yaml`, await models());
    expect(found.message).toMatchInlineSnapshot(`
      "test/fixtures/manifests/catalogue/problems.yaml:3:38 job "default-voice-1" (#1) voice (from defaults): expected a voice of Kokoro for en-gb, got "af_sky"; voices for en-gb: bf_emma, bm_george (af_sky is a voice for en-us); the same for 1 more job using this default
      test/fixtures/manifests/catalogue/problems.yaml:8:49 job "display-name" (#3) model: expected a model slug of the catalogue, got "Kokoro TTS"; "Kokoro TTS" is the display name; use the slug "Kokoro"
      test/fixtures/manifests/catalogue/problems.yaml:9:41 job "typo" (#4) model: expected a model slug of the catalogue, got "Kokor"; did you mean "Kokoro"?
      test/fixtures/manifests/catalogue/problems.yaml:10:44 job "unknown" (#5) model: expected a model slug of the catalogue, got "Whisper"; models for txt2audio: Kokoro, Chatterbox
      test/fixtures/manifests/catalogue/problems.yaml:11:47 job "wrong-type" (#6) model: expected a model for txt2audio, got "Ltx2_3_22B_Dist_INT8" (img2video, txt2video); models for txt2audio: Kokoro, Chatterbox
      test/fixtures/manifests/catalogue/problems.yaml:12:40 job "lang" (#7) lang: expected a language of Kokoro, got "en-au"; languages of Kokoro: en-us, en-gb
      test/fixtures/manifests/catalogue/problems.yaml:13:55 job "speed" (#8) speed: expected a number between 0.5 and 2 for Kokoro, got 3
      test/fixtures/manifests/catalogue/problems.yaml:14:53 job "long" (#9) text: expected between 1 and 40 characters for Kokoro, got 54 characters; add \`split: sentences\` to cut it into parts, or split it into several jobs
      test/fixtures/manifests/catalogue/problems.yaml:19:13 job "frames" (#10) frames: expected a whole number between 30 and 120 for Ltxv_13B_0_9_8_Distilled_FP8, got 240
      test/fixtures/manifests/catalogue/problems.yaml:20:10 job "frames" (#10) fps: expected exactly 30 for Ltxv_13B_0_9_8_Distilled_FP8, got 24
      test/fixtures/manifests/catalogue/problems.yaml:21:12 job "frames" (#10) width: expected a whole number at most 1280 for Ltxv_13B_0_9_8_Distilled_FP8, got 1920
      test/fixtures/manifests/catalogue/problems.yaml:26:23 job "last-frame" (#11) last_frame_image: expected no last frame for Ltxv_13B_0_9_8_Distilled_FP8 (it does not support one), got "images/beach-dusk.png"; remove it, or use a model that supports it: Ltx2_3_22B_Dist_INT8
      12 problems in test/fixtures/manifests/catalogue/problems.yaml; nothing was sent."
    `);
  });

  test('issues carry the job, the field and where the value came from', async () => {
    const [first] = await problems(`${FIXTURES}/catalogue/problems.yaml`, await models());
    expect(first).toMatchObject({ jobIndex: 0, jobId: 'default-voice-1', field: 'voice', fromDefaults: true, line: 3, col: 38 });
  });

  test.each(EXAMPLES)('the example manifests/%s.yaml passes against the simulator models', async (name) => {
    const catalogue = (await models()).map((model) => ({ ...model, limits: { ...model.limits, max_text: undefined } }));
    expect(await problems(`manifests/${name}.yaml`, catalogue)).toEqual([]);
  });

  test('a limit the model does not state is not checked', async () => {
    const bare = (await models()).map((model) => ({ ...model, limits: {}, features: { supports_last_frame: true } }));
    expect(await problems(`${FIXTURES}/valid/full.yaml`, bare)).toEqual([]);
  });
});
