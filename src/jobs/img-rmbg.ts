import { image, model, SIDES } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/** Background removal: `POST /img-rmbg`, multipart with the image; the result is a PNG with transparency. */
export const imgRmbg: JobKind<'img-rmbg'> = defineKind({
  type: 'img-rmbg',
  title: 'Background removal',
  params: { model: model('Ben2') },
  content: { image: image('The image whose background to remove', { facts: SIDES }) },
  // Priced by the image's sides, never its bytes: photos of one size share one price call.
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height'], multipart: true },
  media: 'image',
  plans: { basic: { perMinute: 5, perDay: 100 }, premium: { perMinute: 300 } },
});
