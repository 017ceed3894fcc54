/**
 * Audio to video: `POST /aud2video`, multipart with the sound and (optionally) the first and last
 * frames; the result is an MP4. Its price query is JSON (no audio), as image to video's. Its
 * models are listed as `audio2video` in the catalogue.
 */
import type { UploadRule } from '../rules.js';
import { lastFrame, LTX2, videoKind } from './video.js';

/** The document lists MP3 and OGG; the service's docs and its tester take WAV and FLAC too. */
const SOUND_UPLOAD: UploadRule = { kinds: ['audio'], types: 'mp3, ogg', maxKb: 20 * 1024 };

export const aud2video = videoKind(
  'aud2video',
  async (c, model) => {
    const audioSha256 = (await c.upload('audio', true, SOUND_UPLOAD))?.sha256;
    const firstImageSha256 = await c.image('first_frame_image', false);
    return { audioSha256, firstImageSha256, lastImageSha256: await lastFrame(c, model) };
  },
  { models: [LTX2], catalogueTypes: ['audio2video'], optional: ['steps', 'guidance'] },
);
