import type { JobType } from '../jobs/types.js';
import * as z from 'zod';

/**
 * Every manifest field once: its zod schema (which also feeds the JSON Schema) and the words a
 * message uses for what was expected. Keeping both here means a message can never describe a
 * rule the schema does not enforce.
 */
export interface FieldSpec {
  schema: z.ZodType;
  expected: string;
}

// The negative look-ahead keeps "." and ".." out: ids become file names under the output folder.
export const ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;
const ID_EXPECTED = 'an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or ".."';

const text = (description: string) => z.string().regex(/\S/).describe(description);
const slug = (description: string) => z.string().min(1).describe(description);
const positiveInt = (description: string) => z.int().min(1).describe(description);

export const AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
export const IMAGE_FORMATS_TEXT = 'a JPG, PNG, GIF, BMP or WebP image';

export const COMMON_FIELDS = {
  id: { schema: z.string().regex(ID_PATTERN).describe(`Optional; derived from the content when absent. ${ID_EXPECTED}.`), expected: ID_EXPECTED },
} satisfies Record<string, FieldSpec>;

/** Parameters: may be set on a job or under `defaults.txt2audio`. */
export const TXT2AUDIO_PARAMS = {
  model: { schema: slug('Model slug, e.g. Kokoro'), expected: 'a model slug' },
  voice: { schema: slug('Voice slug of that model and language, e.g. af_sky'), expected: 'a voice slug' },
  lang: { schema: slug('Language slug of that model, e.g. en-us'), expected: 'a language slug' },
  speed: { schema: z.number().gt(0).describe('Speech speed; 1 is normal'), expected: 'a number above 0' },
  format: { schema: z.enum(AUDIO_FORMATS).describe('Audio format'), expected: 'one of "mp3", "wav", "flac"' },
  sample_rate: { schema: positiveInt('Sample rate in Hz, e.g. 24000'), expected: 'a whole number of Hz above 0' },
} satisfies Record<string, FieldSpec>;

/** Content: only on the job itself. */
export const TXT2AUDIO_CONTENT = {
  text: { schema: text('The text to speak; give text or text_file'), expected: 'non-empty text' },
  text_file: { schema: slug("A UTF-8 text file, relative to the manifest's folder"), expected: 'a path to a UTF-8 text file' },
} satisfies Record<string, FieldSpec>;

export const IMG2VIDEO_PARAMS = {
  model: { schema: slug('Model slug, e.g. Ltxv_13B_0_9_8_Distilled_FP8'), expected: 'a model slug' },
  width: { schema: positiveInt('Video width in pixels'), expected: 'a whole number above 0' },
  height: { schema: positiveInt('Video height in pixels'), expected: 'a whole number above 0' },
  steps: { schema: positiveInt('Inference steps'), expected: 'a whole number above 0' },
  frames: { schema: positiveInt('Number of frames'), expected: 'a whole number above 0' },
  fps: { schema: positiveInt('Frames per second'), expected: 'a whole number above 0' },
  guidance: { schema: z.number().min(0).describe('Guidance scale'), expected: 'a number, 0 or more' },
  seed: { schema: z.int().min(0).describe('Random seed'), expected: 'a whole number, 0 or more' },
  negative_prompt: { schema: z.string().describe('What to avoid'), expected: 'text' },
} satisfies Record<string, FieldSpec>;

const IMAGE_EXPECTED = `a path to ${IMAGE_FORMATS_TEXT}`;
export const IMG2VIDEO_CONTENT = {
  prompt: { schema: text('What should happen in the video'), expected: 'non-empty text' },
  first_frame_image: { schema: slug(`First frame: ${IMAGE_FORMATS_TEXT}, at most 10 MB, relative to the manifest's folder`), expected: IMAGE_EXPECTED },
  last_frame_image: { schema: slug('Last frame, where the model supports it; same rules as first_frame_image'), expected: IMAGE_EXPECTED },
} satisfies Record<string, FieldSpec>;

export const PARAMS_BY_TYPE: Record<JobType, Record<string, FieldSpec>> = {
  txt2audio: TXT2AUDIO_PARAMS,
  img2video: IMG2VIDEO_PARAMS,
};

export const CONTENT_BY_TYPE: Record<JobType, Record<string, FieldSpec>> = {
  txt2audio: TXT2AUDIO_CONTENT,
  img2video: IMG2VIDEO_CONTENT,
};

/** Fields a job of that type must end up with, after defaults (text/text_file are checked apart). */
export const REQUIRED_BY_TYPE: Record<JobType, readonly string[]> = {
  txt2audio: ['model', 'voice', 'lang', 'speed', 'format', 'sample_rate'],
  img2video: ['prompt', 'first_frame_image', 'model', 'width', 'height', 'steps', 'frames', 'fps', 'guidance', 'seed'],
};

export const JOB_TYPES: readonly JobType[] = ['txt2audio', 'img2video'];

export const TOP_LEVEL_EXPECTED: Record<string, string> = {
  version: '1',
  budget: 'a number of USD, 0 or more',
  defaults: 'a mapping with txt2audio and/or img2video',
  jobs: 'a list of jobs',
};

/** The words for a field of a job or of defaults, whichever table holds it. */
export function fieldSpecFor(type: JobType | undefined, field: string): FieldSpec | undefined {
  if (field === 'id') return COMMON_FIELDS.id;
  if (type === undefined) return undefined;
  return PARAMS_BY_TYPE[type][field] ?? CONTENT_BY_TYPE[type][field];
}

export function isJobType(value: unknown): value is JobType {
  return value === 'txt2audio' || value === 'img2video';
}
