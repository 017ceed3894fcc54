/**
 * Video upscaling: `POST /vid-upscale`, multipart with the video. A price query gives the frame
 * size and length, or the video; a video's are read from it, as the service does.
 */
import type { Check } from '../rules.js';
import { defineKind } from './kind.js';
import { givesVideo, measured, side, type VideoSize } from './video-file.js';

/** USD per output megapixel-second at scale 1, so a 640×360, 5 s video at ×4 costs about $0.018. */
const USD_PER_MEGAPIXEL_SECOND = 0.001;

const limits = { min_scale: 2, max_scale: 4, max_video_duration_seconds: 60 };

/** The frame size and length a price query gives. */
function asked(c: Check): VideoSize {
  return { width: side(c, 'width'), height: side(c, 'height'), duration: c.number('duration', { min: 0.1 }) };
}

export const vidUpscale = defineKind({
  type: 'vid-upscale',
  models: [{ name: 'Real-ESRGAN video ×4', slug: 'RealESRGAN_Vid_x4', limits, defaults: { scale: 4 } }],
  check: async (c, forPrice) => {
    const given = ![undefined, null, ''].includes(c.fields['scale'] as never);
    const scale = given ? c.number('scale', { integer: true, ...c.range('scale') }) : null;
    // A price query gives the size and length, or the video itself (which a submit always does).
    const size: VideoSize = forPrice && !givesVideo(c) ? asked(c) : await measured(c);
    const maxSec = c.model?.limits['max_video_duration_seconds'];
    if (size.duration !== undefined && maxSec !== undefined && size.duration > maxSec) {
      c.add(forPrice ? 'duration' : 'video', `The video may not be longer than ${maxSec} seconds.`);
    }
    return { scale, ...size };
  },
  usd: (p) => {
    const megapixels = (p.width * p.height * (p.scale ?? 4) ** 2) / 1e6;
    return megapixels * p.duration * USD_PER_MEGAPIXEL_SECOND * p.model.priceFactor;
  },
  media: 'video',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
