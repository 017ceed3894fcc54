import * as z from 'zod';
import { media, model, url } from './fields.js';
import { defineKind, type FieldSpec, type JobKind } from './kind.js';
import type { JobType } from './types.js';

/**
 * The transcription ("Whisper") kinds: this one, and what all five share here: their fields but the
 * source, one submit budget (counted as this kind's), a text result (with timestamps, beside it as JSON).
 */
const flag = (description: string): FieldSpec => ({
  schema: z.boolean().describe(description),
  expected: 'true or false',
});

const PARAMS = {
  model: model('WhisperLargeV3'),
  include_ts: flag('Timestamped segments (true) or plain text (false)'),
  return_result_in_response: {
    ...flag('Whether the transcript comes in the status itself, not only as a file'),
    optional: true,
  },
} as const;

/** The formats the service lists (audio: AAC, MP3, Ogg, WebM; video: MP4, MPEG, MOV, AVI, WMV, Ogg), as signatures. */
const AUDIO_FORMATS = ['MP3', 'MPEG audio', 'Ogg', 'WebM/Matroska'];
const VIDEO_FORMATS = ['MP4/MOV/M4A', 'MPEG video', 'AVI', 'ASF/WMV', 'Ogg'];

/** Priced by its length in whole seconds (rounded up), read from the file: never uploaded for a price. */
const facts = { duration_seconds: 'wholeSec' } as const;
export const audioFile = media('Speech to transcribe', { audio: 20 }, { formats: AUDIO_FORMATS, facts });
export const videoFile = media('A video with speech', { video: 50 }, { formats: VIDEO_FORMATS, facts });
const sourceFile = media('Audio or video with speech', { audio: 20, video: 50 }, {
  formats: [...new Set([...AUDIO_FORMATS, ...VIDEO_FORMATS])],
  facts,
});

interface WhisperSpec<T extends JobType> {
  type: T;
  title: string;
  content: Readonly<Record<string, FieldSpec>>;
  exactlyOne?: readonly [string, string];
  /** What prices it besides the model and timestamps: its URL, or its file's length. */
  pricedBy: readonly string[];
  catalogueTypes?: readonly string[];
}

/** A transcription kind: multipart as soon as it uploads a file, priced the same way as it is sent. */
export function whisperKind<T extends JobType>({ pricedBy, ...spec }: WhisperSpec<T>): JobKind<T> {
  const multipart = Object.values(spec.content).some((field) => field.file !== undefined);
  return defineKind({
    ...spec,
    params: PARAMS,
    // Jobs with the same model, timestamps and URL (or length) share one price call.
    pricing: { by: 'per-key', keyFields: ['model', 'include_ts', ...pricedBy], ...(multipart && { multipart: true }) },
    media: 'text',
    plans: { basic: { perMinute: 1, perDay: 10 }, premium: { perMinute: 300 } },
    paceClass: 'transcribe',
  });
}

/**
 * Audio or video to text: `POST /transcribe`, multipart with a URL or a file (exactly one); priced
 * by the URL, or by the file's length. The catalogue has no type of its own for it: the Whisper
 * models serve it under the four transcription types.
 */
export const transcribe: JobKind<'transcribe'> = whisperKind({
  type: 'transcribe',
  title: 'Audio or video (a URL or a file) to text',
  content: {
    source_url: url('A public audio or video to transcribe (YouTube, X, Twitch, Kick, TikTok, Twitter Spaces)'),
    source_file: sourceFile,
  },
  exactlyOne: ['source_url', 'source_file'],
  pricedBy: ['source_url', 'duration_seconds'],
  catalogueTypes: ['audio2text', 'video2text', 'audio_file2text', 'video_file2text'],
});
