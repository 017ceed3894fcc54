import { image, model, SIDES } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/** Image upscaling: `POST /img-upscale`, multipart with the image (its model sets the scale); an image back. */
export const imgUpscale: JobKind<'img-upscale'> = defineKind({
  type: 'img-upscale',
  title: 'Image upscaling',
  params: { model: model('RealESRGAN_x4plus') },
  content: { image: image('The image to upscale', { facts: SIDES }) },
  // Priced by the image's sides, never its bytes: photos of one size share one price call.
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height'], multipart: true },
  media: 'image',
  plans: { basic: { perMinute: 5, perDay: 100 }, premium: { perMinute: 300 } },
});
