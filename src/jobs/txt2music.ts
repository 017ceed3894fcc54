import * as z from 'zod';
import { audioFormat, model, positiveInt, referenceAudio, text } from './fields.js';
import { defineKind, type FieldSpec, type JobKind, pollOf } from './kind.js';
import { boundsText, checkBounds, limitOf, outside } from './model-checks.js';

const optional = (schema: z.ZodType, expected: string): FieldSpec => ({ schema, expected, optional: true });

/**
 * Text to music: `POST /txt2music`, multipart (with a recording to follow, when given); the result
 * is audio in `format`. Priced by the model, the length asked for and the steps.
 */
export const txt2music: JobKind<'txt2music'> = defineKind({
  type: 'txt2music',
  title: 'Text to music',
  params: {
    model: model('AceStep_1_5_Turbo'),
    lyrics: {
      ...text('The words to sing; "[Instrumental]" for none'),
      expected: 'non-empty text ("[Instrumental]" for none)',
    },
    duration: { schema: z.number().gt(0).describe('Length in seconds'), expected: 'a number of seconds above 0' },
    bpm: optional(z.int().min(1).describe('Beats per minute; left out, the model chooses'), 'a whole number above 0'),
    keyscale: optional(z.string().min(1).describe('Key and scale, e.g. "C major", "F# minor"'), 'a key: "C major"'),
    timesignature: optional(
      z.union([z.literal(2), z.literal(3), z.literal(4), z.literal(6)]).describe('Beats per bar: 2, 3, 4 or 6 (6/8)'),
      'one of 2, 3, 4, 6',
    ),
    vocal_language: optional(z.string().min(1).describe('Language of the lyrics, e.g. en'), 'a language, e.g. en'),
    inference_steps: positiveInt('Inference steps'),
    guidance_scale: { schema: z.number().min(0).describe('Guidance scale'), expected: 'a number, 0 or more' },
    seed: { schema: z.int().min(-1).describe('Random seed; -1 for a random one'), expected: 'a whole number from -1' },
    format: audioFormat,
  },
  content: {
    caption: text('What the music is like: genre, mood, instruments'),
    reference_audio: referenceAudio('A recording whose style to follow'),
  },
  checkModel: (job, found, _models, report) => {
    checkBounds(job.params, found, ['bpm', 'inference_steps'], report);
    for (const field of ['duration', 'guidance_scale']) {
      const [min, max, value] = [limitOf(found, `min_${field}`), limitOf(found, `max_${field}`), job.params[field]];
      const bounds = boundsText(min, max);
      if (bounds !== undefined && typeof value === 'number' && outside(value, min, max)) {
        report(field, `${min === max ? bounds : `a number ${bounds}`} for ${found.slug}`, { value });
      }
    }
  },
  pricing: { by: 'per-key', keyFields: ['model', 'duration', 'inference_steps'] },
  media: 'audio',
  // Music takes as long to make as video: it is asked about as video is.
  poll: pollOf('video'),
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
