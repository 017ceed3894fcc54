import { text, VIDEO_BOUNDS, VIDEO_PARAMS, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkBounds } from './model-checks.js';

/** Text to video: `POST /txt2video`, JSON; the result is an MP4. Same models and limits as image to video. */
export const txt2video: JobKind<'txt2video'> = defineKind({
  type: 'txt2video',
  title: 'Text to video',
  params: VIDEO_PARAMS,
  content: { prompt: text('What should happen in the video') },
  // In this order in messages and the schema.
  required: ['prompt', 'model', 'width', 'height', 'guidance', 'steps', 'seed', 'frames', 'fps'],
  checkModel: (job, found, _models, report) => checkBounds(job.params, found, VIDEO_BOUNDS, report),
  // The price request takes these six fields and nothing else.
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height', 'frames', 'steps', 'fps'] },
  media: 'video',
  plans: VIDEO_PLANS,
});
