import * as z from 'zod';
import type { FileMedia } from '../media-type.js';
import type { FieldSpec, JobKind, MediaField } from './kind.js';

/**
 * Field specs the kinds share: a zod schema (which also feeds the JSON Schema) and the words a
 * message uses for what was expected, side by side so a message never describes a rule the
 * schema does not enforce.
 */

export const text = (description: string): FieldSpec => ({
  schema: z.string().regex(/\S/).describe(description),
  expected: 'non-empty text',
  takesText: true,
});

export const slug = (description: string, expected: string): FieldSpec => ({ schema: z.string().min(1).describe(description), expected });

export const positiveInt = (description: string): FieldSpec => ({
  schema: z.int().min(1).describe(description),
  expected: 'a whole number above 0',
});

export const model = (example: string): FieldSpec => slug(`Model slug, e.g. ${example}`, 'a model slug');

export const guidance: FieldSpec = { schema: z.number().min(0).describe('Guidance scale'), expected: 'a number, 0 or more' };
export const seed: FieldSpec = { schema: z.int().min(0).describe('Random seed'), expected: 'a whole number, 0 or more' };
export const negativePrompt: FieldSpec = { schema: z.string().describe('What to avoid'), expected: 'text', optional: true };

export const loras: FieldSpec = {
  schema: z
    .array(
      z.strictObject({
        name: z.string().min(1).describe('LoRA name, as the model lists it'),
        weight: z.number().min(0).describe('Its weight'),
      }),
    )
    .describe('LoRA models to apply (only models that list them)'),
  expected: 'a list of { name, weight } with a weight of 0 or more',
  optional: true,
};

export const AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
export const audioFormat: FieldSpec = {
  schema: z.enum(AUDIO_FORMATS).describe('Audio format'),
  expected: 'one of "mp3", "wav", "flac"',
};

const REFERENCE_FORMATS = ['MP3', 'MPEG audio', 'Ogg', 'MP4/MOV/M4A'];

/** An optional recording the service learns from (a voice, a style): MP3, Ogg or M4A, at most 15 MB. */
export const referenceAudio = (description: string, durationSec?: { min: number; max: number }): FieldSpec => ({
  ...media(description, { audio: 15 }, { formats: REFERENCE_FORMATS, ...(durationSec && { durationSec }) }),
  optional: true,
});

const IMAGE_FORMATS_TEXT = 'a JPG, PNG, GIF, BMP or WebP image';

/** An image field; `field` adds its other rules (the facts its kind prices by). */
export function image(description: string, field: Omit<MediaField, 'maxBytes'> = {}): FieldSpec {
  const where = `${IMAGE_FORMATS_TEXT}, 64 to 5000 pixels a side, at most 10 MB, inside the manifest's folder`;
  const file = { ...field, maxBytes: { image: 10 * 1024 * 1024 } };
  return { ...slug(`${description}: ${where}`, `a path to ${IMAGE_FORMATS_TEXT}`), file };
}

/** An image's sides as the parameters a price by size reads (they are never sent with the submit). */
export const SIDES = { width: 'width', height: 'height' } as const;

const MEDIA_TEXT: Readonly<Record<FileMedia, string>> = {
  image: IMAGE_FORMATS_TEXT,
  audio: 'an audio file',
  video: 'a video',
};

/** What a media field takes, in words: "a video", "an audio file or a video". */
export const mediaText = (field: MediaField): string =>
  (Object.keys(field.maxBytes) as FileMedia[]).map((kind) => MEDIA_TEXT[kind]).join(' or ');

/**
 * A field that uploads media (audio, video, images, or a choice): `maxMb` per medium, its other
 * rules in `field`; a `list` field takes several paths.
 */
export function media(
  description: string,
  maxMb: Partial<Record<FileMedia, number>>,
  field: Omit<MediaField, 'maxBytes'> = {},
): FieldSpec {
  const maxBytes = Object.fromEntries(Object.entries(maxMb).map(([kind, mb]) => [kind, mb * 1024 * 1024]));
  const spec: MediaField = { ...field, maxBytes };
  const sizes = Object.entries(maxMb);
  const limits = sizes.map(([kind, mb]) => `${sizes.length > 1 ? `${kind} ` : ''}at most ${mb} MB`).join(', ');
  const where = `${mediaText(spec)} (${limits}), inside the manifest's folder`;
  if (!field.list) return { ...slug(`${description}: ${where}`, `a path to ${mediaText(spec)}`), file: spec };
  const schema = z.array(z.string().min(1)).min(1).describe(`${description}: a list of paths, each ${where}`);
  return { schema, expected: `a list of paths, each to ${mediaText(spec)}`, file: spec };
}

/** A link the service fetches itself: http(s) only, never a local file or another scheme. */
export const url = (description: string): FieldSpec => ({
  // The pattern carries the rule into the JSON Schema too, so an editor flags a `file://` as it is typed.
  schema: z.url({ protocol: /^https?$/ }).regex(/^https?:\/\//).describe(`${description}: an http or https URL`),
  expected: 'an http or https URL',
});

/** What both video kinds (image to video, text to video) take: the same models, the same limits. */
export const VIDEO_PARAMS: Readonly<Record<string, FieldSpec>> = {
  model: model('Ltxv_13B_0_9_8_Distilled_FP8'),
  width: positiveInt('Video width in pixels'),
  height: positiveInt('Video height in pixels'),
  steps: positiveInt('Inference steps'),
  frames: positiveInt('Number of frames'),
  fps: positiveInt('Frames per second'),
  guidance,
  seed,
  negative_prompt: negativePrompt,
};

/** The video kinds' numeric bounds in the catalogue and their plan limits. */
export const VIDEO_BOUNDS = ['width', 'height', 'steps', 'frames', 'fps'] as const;
export const VIDEO_PLANS: JobKind['plans'] = { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } };
