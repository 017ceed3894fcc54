/** Image to video: `POST /img2video`, multipart with the first (and last) frame; the result is an MP4. */
import { ErrorBag, type Fields } from '../rules.js';
import { imageDigest, mapValid, type Validated } from '../validate.js';
import type { Models, SimKind } from './kind.js';
import { acceptVideo, validateVideoPrice, VIDEO_MODELS, videoContent, videoKind, type VideoParams } from './video.js';

const TYPE = 'img2video';

/** A submit, images included (type by magic bytes, size, last frame support). */
async function validateSubmit(fields: Fields, models: Models): Promise<Validated<VideoParams>> {
  const priced = validateVideoPrice(fields, models, TYPE);
  const bag = priced.ok ? new ErrorBag() : priced.bag;
  const model = priced.ok ? priced.value.model : undefined;
  const { prompt, negativePrompt, guidance, seed } = videoContent(bag, fields, model);
  const firstImageSha256 = await imageDigest(bag, fields, 'first_frame_image', true);
  let lastImageSha256: string | undefined;
  const lastGiven = fields['last_frame_image'] !== undefined && fields['last_frame_image'] !== null && fields['last_frame_image'] !== '';
  if (lastGiven && model && model.features['supports_last_frame'] !== true) {
    bag.add('last_frame_image', 'The last frame image field is prohibited.');
  } else {
    lastImageSha256 = await imageDigest(bag, fields, 'last_frame_image', false);
  }
  if (!priced.ok || !bag.empty || prompt === undefined || guidance === undefined || seed === undefined || firstImageSha256 === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { ...priced.value, prompt, negativePrompt, guidance, seed, firstImageSha256, lastImageSha256 } };
}

export const img2video: SimKind<typeof TYPE> = {
  type: TYPE,
  models: VIDEO_MODELS,
  ...videoKind(TYPE),
  submit: async (fields, models, mode) => mapValid(await validateSubmit(fields, models), (p) => acceptVideo(TYPE, p, mode)),
};
