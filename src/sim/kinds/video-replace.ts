/**
 * Character replacement: `POST /videos/replace`, multipart with the video and the reference
 * image; the result is a video. Its price query (`/videos/replace/price`) gives the video or its
 * length, with the output size or without (then the video's own, or the model's default).
 */
import { type Check, isBlank } from '../rules.js';
import { defineKind } from './kind.js';
import { givesVideo, measured, optionalInt, side, type VideoSize } from './video-file.js';

/** USD per output megapixel-second, so 832×480 for 5 s costs about $0.008. */
const USD_PER_MEGAPIXEL_SECOND = 0.004;

/** The size a price by length alone is for: the model's default output. */
const WAN_DEFAULTS = { width: 832, height: 480, steps: 4 };
const UNSIZED = { width: undefined, height: undefined };

/** The output size: both sides or neither (Laravel's `required_with`); null when left out. */
function outputSize(c: Check): { width?: number | null; height?: number | null } {
  const [width, height] = [!isBlank(c.fields['width']), !isBlank(c.fields['height'])];
  if (!width && !height) return { width: null, height: null };
  if (width !== height) {
    const [missing, present] = width ? ['height', 'width'] : ['width', 'height'];
    return c.add(missing, `The ${missing} field is required when ${present} is present.`) ?? {};
  }
  return { width: side(c, 'width'), height: side(c, 'height') };
}

export const videoReplace = defineKind({
  type: 'video-replace',
  paths: { submit: 'videos/replace', price: 'videos/replace/price' },
  models: [{ name: 'Wan 2.2 Animate 14B INT8', slug: 'Wan2_2_Animate_14B_INT8', defaults: WAN_DEFAULTS }],
  check: async (c, forPrice) => {
    const byLength = (): VideoSize => ({ ...UNSIZED, duration: c.number('duration', { min: 0.1 }) });
    const video = forPrice && !givesVideo(c) ? byLength() : await measured(c);
    const size = outputSize(c);
    const submit = async () => ({
      refImageSha256: await c.image('ref_image', true),
      prompt: c.optional('prompt'),
      steps: optionalInt(c, 'steps', 1),
      seed: optionalInt(c, 'seed', -1),
    });
    return {
      duration: video.duration,
      width: size.width ?? video.width ?? WAN_DEFAULTS.width,
      height: size.height ?? video.height ?? WAN_DEFAULTS.height,
      videoSha256: video.videoSha256 ?? null,
      ...(forPrice ? {} : await submit()),
    };
  },
  usd: (p) => ((p.width * p.height) / 1e6) * p.duration * USD_PER_MEGAPIXEL_SECOND * p.model.priceFactor,
  media: 'video',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
