/** OCR: `POST /img2txt`, multipart with the image; the text comes in the status or as a file. */
import { defineKind } from './kind.js';
import { megapixels, oneImage, onePerImagePlans } from './one-image.js';

/** About 0.003 USD for a 1-megapixel page. */
const USD_PER_MEGAPIXEL = 0.003;

export const img2txt = defineKind({
  type: 'img2txt',
  models: [{ name: 'Nanonets OCR S F16', slug: 'Nanonets_Ocr_S_F16' }],
  check: async (c, forPrice) => {
    const format = c.optional('format');
    return {
      ...(await oneImage(c, forPrice)),
      language: c.optional('language'),
      format: format === null ? null : c.oneOf('format', format, ['text', 'json']),
      inline: forPrice ? null : c.flag('return_result_in_response'),
    };
  },
  usd: (p) => USD_PER_MEGAPIXEL * megapixels(p) * p.model.priceFactor,
  media: 'text',
  plans: onePerImagePlans(50),
});
