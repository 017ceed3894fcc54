import { image, pick, text, VIDEO_BOUNDS, VIDEO_PARAMS, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind, type MultipartFile } from './kind.js';
import { checkBounds } from './model-checks.js';
import type { SendableJob } from './job.js';

/** The fields its price depends on: no images, guidance or seed. */
const PRICED = ['model', 'width', 'height', 'steps', 'frames', 'fps'] as const;
const SENT = ['prompt', 'negative_prompt', 'model', 'width', 'height', 'guidance', 'steps', 'frames', 'fps', 'seed'] as const;
const IMAGES = ['first_frame_image', 'last_frame_image'] as const;

/** Image to video: `POST /img2video`, multipart with the frames as file parts. */
export const img2video: JobKind<'img2video'> = defineKind({
  type: 'img2video',
  title: 'Image to video',
  params: VIDEO_PARAMS,
  content: {
    prompt: text('What should happen in the video'),
    first_frame_image: image('First frame'),
    last_frame_image: image('Last frame, where the model supports it'),
  },
  required: ['prompt', 'first_frame_image', 'model', 'width', 'height', 'steps', 'frames', 'fps', 'guidance', 'seed'],
  files: { first_frame_image: 'image', last_frame_image: 'image' },
  checkModel: (job, found, models, report) => {
    checkBounds(job.params, found, VIDEO_BOUNDS, report);
    const last = job.images['last_frame_image'];
    if (last !== undefined && found.features['supports_last_frame'] !== true) {
      const able = models.filter((other) => other.features['supports_last_frame'] === true).map((other) => other.slug);
      const hint = able.length > 0 ? `remove it, or use a model that supports it: ${able.join(', ')}` : 'remove it';
      report('last_frame_image', `no last frame for ${found.slug} (it does not support one)`, { value: last.written }, hint);
    }
  },
  pricing: {
    by: 'per-key',
    keyFields: PRICED,
    request: (job) => ({ endpoint: 'img2video/price-calculation', json: pick(job.params, PRICED) }),
  },
  submit: (job) => ({
    endpoint: 'img2video',
    // Multipart carries every field as text; the images go as real file parts.
    multipart: { fields: Object.fromEntries(Object.entries(pick(job.params, SENT)).map(([k, v]) => [k, String(v)])), files: imageParts(job) },
  }),
  media: 'video',
  plans: VIDEO_PLANS,
});

function imageParts(job: SendableJob): MultipartFile[] {
  return IMAGES.flatMap((field) => {
    const ref = job.images[field];
    return ref === undefined ? [] : [{ field, path: ref.path, contentType: ref.contentType, filename: ref.path.split(/[\\/]/).pop() ?? 'image' }];
  });
}
