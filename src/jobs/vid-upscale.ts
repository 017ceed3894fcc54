import * as z from 'zod';
import { media, model, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkBounds, limitOf } from './model-checks.js';

/**
 * Video upscaling: `POST /vid-upscale`, multipart with the video as a file part; the result is a
 * video. Priced by the video's frame size and length, read from the file when the manifest is, so
 * its bytes are uploaded once (with the submit) and equal videos share one price.
 */
/** What its price depends on besides the model and scale, read from the video. */
const FACTS = { width: 'width', height: 'height', duration: 'durationSec' } as const;

export const vidUpscale: JobKind<'vid-upscale'> = defineKind({
  type: 'vid-upscale',
  title: 'Video upscaling',
  params: {
    model: model('RealESRGAN_Vid_x4'),
    scale: {
      schema: z.int().min(1).max(16).describe('Upscale factor, where the model takes one'),
      expected: 'a whole number from 1 to 16',
      optional: true,
    },
  },
  content: {
    video: media('The video to upscale', { video: 50 }, { facts: FACTS }),
  },
  checkModel: (job, found, _models, report) => {
    checkBounds(job.params, found, ['scale'], report);
    const maxSec = limitOf(found, 'max_video_duration_seconds');
    const duration = job.params['duration'];
    if (maxSec !== undefined && typeof duration === 'number' && duration > maxSec) {
      const got = { text: `${duration.toFixed(1)} seconds long` };
      report('video', `a video of at most ${maxSec} seconds for ${found.slug}`, got);
    }
  },
  pricing: { by: 'per-key', keyFields: ['model', 'scale', 'width', 'height', 'duration'], multipart: true },
  media: 'video',
  plans: VIDEO_PLANS,
});
