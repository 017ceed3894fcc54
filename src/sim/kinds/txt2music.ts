/**
 * Text to music: `POST /txt2music`, multipart, with a recording to follow if given; the result
 * is audio. A price query gives the model, the length and the steps.
 */
import type { Check } from '../rules.js';
import { defineKind } from './kind.js';
import { referenceAudio } from './reference-audio.js';

/** USD per second of music at the turbo model's 8 steps, so a 30 s bed costs about $0.006. */
const USD_PER_SECOND_STEP = 0.000025;
const FORMATS = ['mp3', 'wav', 'flac'] as const;
const TIME_SIGNATURES = [2, 3, 4, 6] as const;

/** The turbo model takes exactly 8 steps and guidance 1 (the document's bounds). */
const TURBO = {
  name: 'ACE-Step 1.5 Turbo',
  slug: 'AceStep_1_5_Turbo',
  limits: {
    min_duration: 10, max_duration: 300, min_bpm: 50, max_bpm: 200,
    min_inference_steps: 8, max_inference_steps: 8, min_guidance_scale: 1, max_guidance_scale: 1,
  },
  defaults: { duration: 30, inference_steps: 8, guidance_scale: 1, format: 'mp3' },
};

/** Null when left out. */
function optionalNumber(c: Check, field: string, integer: boolean): number | null | undefined {
  const value = c.fields[field];
  return value === undefined || value === null || value === '' ? null : c.number(field, { integer, ...c.range(field) });
}

/** What only a submit carries: the words, the musical choices and the recording. */
async function song(c: Check) {
  const signature = optionalNumber(c, 'timesignature', true);
  return {
    caption: c.string('caption'),
    lyrics: c.string('lyrics'),
    bpm: optionalNumber(c, 'bpm', true),
    keyscale: c.optional('keyscale'),
    timesignature: signature === null ? null : c.oneOf('timesignature', signature, TIME_SIGNATURES),
    vocalLanguage: c.optional('vocal_language'),
    guidanceScale: c.number('guidance_scale', c.range('guidance_scale')),
    seed: c.number('seed', { integer: true, min: -1 }),
    format: c.oneOf('format', c.string('format'), FORMATS),
    reference: await referenceAudio(c, 'reference_audio', false, { min: 1, max: TURBO.limits.max_duration }),
  };
}

export const txt2music = defineKind({
  type: 'txt2music',
  models: [TURBO],
  check: async (c, forPrice) => ({
    duration: c.number('duration', c.range('duration')),
    steps: c.bounded('inference_steps'),
    ...(forPrice ? {} : await song(c)),
  }),
  usd: (p) => p.duration * p.steps * USD_PER_SECOND_STEP * p.model.priceFactor,
  media: 'audio',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
