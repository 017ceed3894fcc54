import { pick, text, VIDEO_BOUNDS, VIDEO_PARAMS, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkBounds } from './model-checks.js';

const SENT = ['prompt', 'negative_prompt', 'model', 'width', 'height', 'guidance', 'steps', 'seed', 'frames', 'fps'] as const;
/** What its price depends on: the price request takes these six fields and nothing else. */
const PRICED = ['model', 'width', 'height', 'frames', 'steps', 'fps'] as const;

/** Text to video: `POST /txt2video`, JSON; the result is an MP4. Same models and limits as image to video. */
export const txt2video: JobKind<'txt2video'> = defineKind({
  type: 'txt2video',
  title: 'Text to video',
  params: VIDEO_PARAMS,
  content: { prompt: text('What should happen in the video') },
  required: ['prompt', 'model', 'width', 'height', 'guidance', 'steps', 'seed', 'frames', 'fps'],
  checkModel: (job, found, _models, report) => checkBounds(job.params, found, VIDEO_BOUNDS, report),
  pricing: {
    by: 'per-key',
    keyFields: PRICED,
    request: (job) => ({ endpoint: 'txt2video/price-calculation', json: pick(job.params, PRICED) }),
  },
  submit: (job) => ({ endpoint: 'txt2video', json: pick(job.params, SENT) }),
  media: 'video',
  plans: VIDEO_PLANS,
});
