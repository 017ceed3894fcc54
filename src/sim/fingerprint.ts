/**
 * The canonical content of an accepted job, hashed. Two submits with the same fingerprint asked
 * for the same thing; numbers are parsed first so JSON and multipart spellings agree.
 */
import { createHash } from 'node:crypto';
import type { AudioParams, ImageParams, VideoParams } from './validate.js';

export function audioFingerprint(p: AudioParams): string {
  const canonical = ['txt2audio', p.model.slug, p.lang, p.voice, p.speed, p.format, p.sampleRate, p.text ?? ''];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** `type` tells image to video (its frames' hashes) from text to video (none). */
export function videoFingerprint(p: VideoParams, type: 'img2video' | 'txt2video'): string {
  const canonical = [
    type, p.model.slug, p.width, p.height, p.steps, p.frames, p.fps, p.guidance ?? null, p.seed ?? null,
    p.prompt ?? '', p.negativePrompt ?? '', p.firstImageSha256 ?? '', p.lastImageSha256 ?? '',
  ];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

export function imageFingerprint(p: ImageParams): string {
  const canonical = ['txt2img', p.model.slug, p.width, p.height, p.steps, p.guidance, p.seed, p.prompt, p.negativePrompt ?? '', p.loras];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}
