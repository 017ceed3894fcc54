/**
 * One sample job per kind for the conformance test: `full` sets every field the kind has,
 * `minimal` only the required ones. A new kind adds its entry here (the test fails loudly until
 * it does), and a new field of a kind goes into its `full` sample (the test says which is missing).
 */

import { mp3Frames, mp4Movie, webmMovie } from '../support/media-files.js';

export interface SampleJob {
  /** Every field sent but text and files, as the manifest resolves them. */
  params: Record<string, unknown>;
  /** The text of a kind that may read it from a file (`textFrom`). */
  text?: string;
  /** File fields: the bytes each carries, written to a file the job names. */
  files?: Record<string, { bytes: Uint8Array; contentType: string }>;
}

/** A PNG's signature and header: what the manifest's checks of an image read. */
const PNG_HEADER = [
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
  0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 1, 0, 0, 0, 1, 0, 8, 2, 0, 0, 0,
];
const PNG = { bytes: new Uint8Array(PNG_HEADER), contentType: 'image/png' };
const WEBM = { bytes: new Uint8Array(webmMovie(2)), contentType: 'video/webm' };
const MP4 = { bytes: new Uint8Array(mp4Movie(3)), contentType: 'video/mp4' };
const MP3 = { bytes: new Uint8Array(mp3Frames(3)), contentType: 'audio/mpeg' };
const WHISPER = { model: 'WhisperLargeV3', include_ts: true };
const WHISPER_FULL = { ...WHISPER, return_result_in_response: true };
const VOICE = { bytes: new Uint8Array(mp3Frames(5)), contentType: 'audio/mpeg' };

const SPEECH = { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };
const MUSIC = { model: 'AceStep_1_5_Turbo', lyrics: '[Instrumental]', duration: 30, inference_steps: 8, guidance_scale: 1, seed: -1, format: 'mp3' };
const EDIT = { prompt: 'make it dusk', model: 'QwenImageEdit_Plus_NF4', steps: 40, seed: 3 };
const IMAGE = { prompt: 'a harbour', model: 'Flux1schnell', width: 512, height: 512, guidance: 0, steps: 4, seed: 7 };
const VIDEO = {
  prompt: 'waves on a shore',
  model: 'Ltxv_13B_0_9_8_Distilled_FP8',
  width: 768,
  height: 432,
  steps: 8,
  frames: 97,
  fps: 24,
  guidance: 3,
  seed: 11,
};

export const SAMPLE_JOBS: Readonly<Record<string, { full: SampleJob; minimal: SampleJob }>> = {
  txt2audio: {
    full: {
      params: { ...SPEECH, mode: 'voice_clone', ref_text: 'Hello there.', instruct: 'calm and slow' },
      text: 'Welcome to the show.',
      files: { ref_audio: VOICE },
    },
    minimal: { params: SPEECH, text: 'Hi.' },
  },
  txt2music: {
    full: {
      params: { ...MUSIC, caption: 'warm lo-fi beat', bpm: 90, keyscale: 'C major', timesignature: 4, vocal_language: 'en' },
      files: { reference_audio: VOICE },
    },
    minimal: { params: { ...MUSIC, caption: 'warm lo-fi beat' } },
  },
  img2img: {
    full: {
      params: { ...EDIT, negative_prompt: 'blur', guidance: 4, width: 512, height: 512, loras: [{ name: 'ink', weight: 0.5 }] },
      files: { 'images.0': PNG, 'images.1': PNG },
    },
    minimal: { params: EDIT, files: { image: PNG } },
  },
  txt2img: {
    full: { params: { ...IMAGE, negative_prompt: 'blur', loras: [{ name: 'film_grain', weight: 0.6 }] } },
    minimal: { params: IMAGE },
  },
  txt2video: {
    full: { params: { ...VIDEO, negative_prompt: 'static' } },
    minimal: { params: VIDEO },
  },
  img2video: {
    full: { params: { ...VIDEO, negative_prompt: 'static' }, files: { first_frame_image: PNG, last_frame_image: PNG } },
    minimal: { params: VIDEO, files: { first_frame_image: PNG } },
  },
  txt2embedding: {
    full: { params: { model: 'Bge_M3_FP16', return_result_in_response: true, input: 'a lighthouse at dusk' } },
    minimal: { params: { model: 'Bge_M3_FP16', input: 'a lighthouse at dusk' } },
  },
  aud2txt: {
    full: { params: { ...WHISPER_FULL, audio_url: 'https://twitter.com/i/spaces/1eaKbrPAqbwKX' } },
    minimal: { params: { ...WHISPER, audio_url: 'https://twitter.com/i/spaces/1eaKbrPAqbwKX' } },
  },
  vid2txt: {
    full: { params: { ...WHISPER_FULL, video_url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw' } },
    minimal: { params: { ...WHISPER, video_url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw' } },
  },
  audiofile2txt: {
    full: { params: WHISPER_FULL, files: { audio: MP3 } },
    minimal: { params: WHISPER, files: { audio: MP3 } },
  },
  videofile2txt: {
    full: { params: WHISPER_FULL, files: { video: WEBM } },
    minimal: { params: WHISPER, files: { video: WEBM } },
  },
  // Exactly one source: the minimal sample gives the URL, the full one the file.
  transcribe: {
    full: { params: WHISPER_FULL, files: { source_file: MP3 } },
    minimal: { params: { ...WHISPER, source_url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw' } },
  },
  'vid-upscale': {
    full: { params: { model: 'RealESRGAN_Vid_x4', scale: 2 }, files: { video: WEBM } },
    minimal: { params: { model: 'RealESRGAN_Vid_x4' }, files: { video: WEBM } },
  },
  'img-rmbg': {
    full: { params: { model: 'Ben2' }, files: { image: PNG } },
    minimal: { params: { model: 'Ben2' }, files: { image: PNG } },
  },
  'img-upscale': {
    full: { params: { model: 'RealESRGAN_x4plus' }, files: { image: PNG } },
    minimal: { params: { model: 'RealESRGAN_x4plus' }, files: { image: PNG } },
  },
  img2txt: {
    full: {
      params: { model: 'Nanonets_Ocr_S_F16', language: 'en', format: 'json', return_result_in_response: true },
      files: { image: PNG },
    },
    minimal: { params: { model: 'Nanonets_Ocr_S_F16' }, files: { image: PNG } },
  },
  'vid-rmbg': {
    full: { params: { model: 'RMBG-1.4' }, files: { video: MP4 } },
    minimal: { params: { model: 'RMBG-1.4' }, files: { video: WEBM } },
  },
  'video-replace': {
    full: {
      params: { model: 'Wan2_2_Animate_14B_INT8', prompt: 'a knight', width: 832, height: 480, steps: 4, seed: 5 },
      files: { video: MP4, ref_image: PNG },
    },
    minimal: { params: { model: 'Wan2_2_Animate_14B_INT8' }, files: { video: MP4, ref_image: PNG } },
  },
  aud2video: {
    full: {
      params: { ...VIDEO, model: 'Ltx2_3_22B_Dist_INT8', negative_prompt: 'blur' },
      files: { audio: MP3, first_frame_image: PNG, last_frame_image: PNG },
    },
    minimal: {
      params: { prompt: 'a singer', model: 'Ltx2_3_22B_Dist_INT8', width: 768, height: 432, frames: 121, fps: 24, seed: 3 },
      files: { audio: MP3 },
    },
  },
};
