/** Image to video: `POST /img2video`, multipart with the first (and last) frame; the result is an MP4. */
import { lastFrame, videoKind } from './video.js';

export const img2video = videoKind('img2video', async (c, model) => ({
  firstImageSha256: await c.image('first_frame_image', true),
  lastImageSha256: await lastFrame(c, model),
}));
