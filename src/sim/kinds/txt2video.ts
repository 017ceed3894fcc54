/** Text to video: `POST /txt2video`, JSON, no images; the result is an MP4. */
import { ErrorBag, type Fields } from '../rules.js';
import { mapValid, type Validated } from '../validate.js';
import type { Models, SimKind } from './kind.js';
import { acceptVideo, validateVideoPrice, VIDEO_MODELS, videoContent, videoKind, type VideoParams } from './video.js';

const TYPE = 'txt2video';

/** A submit: a video price query plus prompt, guidance and seed. */
function validateSubmit(fields: Fields, models: Models): Validated<VideoParams> {
  const priced = validateVideoPrice(fields, models, TYPE);
  const bag = priced.ok ? new ErrorBag() : priced.bag;
  const model = priced.ok ? priced.value.model : undefined;
  const { prompt, negativePrompt, guidance, seed } = videoContent(bag, fields, model);
  if (!priced.ok || !bag.empty || prompt === undefined || guidance === undefined || seed === undefined) return { ok: false, bag };
  return { ok: true, value: { ...priced.value, prompt, negativePrompt, guidance, seed } };
}

export const txt2video: SimKind<typeof TYPE> = {
  type: TYPE,
  models: VIDEO_MODELS,
  ...videoKind(TYPE),
  submit: (fields, models, mode) => mapValid(validateSubmit(fields, models), (p) => acceptVideo(TYPE, p, mode)),
};
