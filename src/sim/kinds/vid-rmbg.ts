/**
 * Video background removal: `POST /vid-rmbg`, multipart with the video; the result is a video. A
 * price query gives the video or its frame size (the document's oneOf: no length).
 */
import { defineKind } from './kind.js';
import { givesVideo, measured, side } from './video-file.js';

/** USD per megapixel of frame, so a 640×360 video costs about $0.0046. */
const USD_PER_MEGAPIXEL = 0.02;

export const vidRmbg = defineKind({
  type: 'vid-rmbg',
  // The document's example is the only model it names.
  models: [{ name: 'RMBG 1.4', slug: 'RMBG-1.4' }],
  check: async (c, forPrice) => {
    if (forPrice && !givesVideo(c)) return { width: side(c, 'width'), height: side(c, 'height') };
    const { width, height, videoSha256 } = await measured(c);
    return { width, height, videoSha256 };
  },
  usd: (p) => ((p.width * p.height) / 1e6) * USD_PER_MEGAPIXEL * p.model.priceFactor,
  media: 'video',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
