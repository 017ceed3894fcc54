/** Image to video: `POST /img2video`, multipart with the first (and last) frame; the result is an MP4. */
import { videoKind } from './video.js';

export const img2video = videoKind('img2video', async (c, model) => {
  const firstImageSha256 = await c.image('first_frame_image', true);
  const last = c.fields['last_frame_image'];
  const lastGiven = last !== undefined && last !== null && last !== '';
  const prohibited = lastGiven && model && model.features['supports_last_frame'] !== true;
  const lastImageSha256 = prohibited
    ? c.add('last_frame_image', 'The last frame image field is prohibited.')
    : await c.image('last_frame_image', false);
  return { firstImageSha256, lastImageSha256 };
});
