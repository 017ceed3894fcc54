import { guidance, model, negativePrompt, pick, positiveInt, seed, text } from './fields.js';
import type { JobKind } from './kind.js';
import { checkBounds, extensionFrom } from './model-checks.js';

const SENT = ['prompt', 'negative_prompt', 'model', 'width', 'height', 'guidance', 'steps', 'seed', 'frames', 'fps'] as const;
/** What its price depends on: the price request takes these six fields and nothing else. */
const PRICED = ['model', 'width', 'height', 'frames', 'steps', 'fps'] as const;

/** Text to video: `POST /txt2video`, JSON; the result is an MP4. Same models and limits as image to video. */
export const txt2video: JobKind = {
  type: 'txt2video',
  title: 'Text to video',
  params: {
    model: model('Ltxv_13B_0_9_8_Distilled_FP8'),
    width: positiveInt('Video width in pixels'),
    height: positiveInt('Video height in pixels'),
    steps: positiveInt('Inference steps'),
    frames: positiveInt('Number of frames'),
    fps: positiveInt('Frames per second'),
    guidance,
    seed,
    negative_prompt: negativePrompt,
  },
  content: { prompt: text('What should happen in the video') },
  required: ['prompt', 'model', 'width', 'height', 'guidance', 'steps', 'seed', 'frames', 'fps'],
  files: {},
  checkModel: (job, found, _models, report) => checkBounds(job.params, found, ['width', 'height', 'steps', 'frames', 'fps'], report),
  pricing: {
    by: 'per-key',
    keyFields: PRICED,
    request: (job) => ({ endpoint: 'txt2video/price-calculation', json: pick(job.params, PRICED) }),
  },
  submit: (job) => ({ endpoint: 'txt2video', json: pick(job.params, SENT) }),
  output: { media: 'video', extension: (_job, found) => extensionFrom(found, ['mp4', 'webm', 'mov', 'gif'], 'mp4') },
  poll: {
    service: { firstMs: 5000, maxMs: 30_000, factor: 1.5, giveUpMs: 15 * 60_000 },
    simulator: { firstMs: 300, maxMs: 2000, factor: 1.5, giveUpMs: 120_000 },
  },
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
};
