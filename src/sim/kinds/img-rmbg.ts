/** Background removal: `POST /img-rmbg`, multipart with the image; the result is a PNG with transparency. */
import { pngImage } from '../results.js';
import { defineKind } from './kind.js';
import { megapixels, oneImage, onePerImagePlans } from './one-image.js';

/** About 0.002 USD for a 1-megapixel photo. */
const USD_PER_MEGAPIXEL = 0.002;

export const imgRmbg = defineKind({
  type: 'img-rmbg',
  models: [{ name: 'BEN2', slug: 'Ben2' }],
  check: oneImage,
  usd: (p) => USD_PER_MEGAPIXEL * megapixels(p) * p.model.priceFactor,
  media: 'image',
  result: { ending: 'cutout', contentType: 'image/png', bytes: () => pngImage(64, true) },
  plans: onePerImagePlans(100),
});
