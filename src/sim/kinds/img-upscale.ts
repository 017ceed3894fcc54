/** Image upscaling: `POST /img-upscale`, multipart with the image; the result is an image. */
import { defineKind } from './kind.js';
import { megapixels, oneImage, onePerImagePlans } from './one-image.js';

/** About 0.004 USD for a 1-megapixel photo (its sides before upscaling). */
const USD_PER_MEGAPIXEL = 0.004;

export const imgUpscale = defineKind({
  type: 'img-upscale',
  models: [{ name: 'Real-ESRGAN x4plus', slug: 'RealESRGAN_x4plus' }],
  check: oneImage,
  usd: (p) => USD_PER_MEGAPIXEL * megapixels(p) * p.model.priceFactor,
  media: 'image',
  plans: onePerImagePlans(100),
});
