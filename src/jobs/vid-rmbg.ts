import { media, model, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/**
 * Video background removal: `POST /vid-rmbg`, multipart with the video; the result is a video.
 * Priced by the video's frame size, read from the file when the manifest is (the price call takes
 * it instead of the video), so its bytes are uploaded once, with the submit. API.md's rate table
 * leaves it out: it takes the other video kinds' limits.
 */
/** What its price depends on besides the model, read from the video. */
const FACTS = { width: 'width', height: 'height' } as const;

export const vidRmbg: JobKind<'vid-rmbg'> = defineKind({
  type: 'vid-rmbg',
  title: 'Video background removal',
  // The catalogue's filter has no value for it: the service alone judges its model.
  catalogueTypes: [],
  params: { model: model('RMBG-1.4') },
  content: {
    video: media('The video whose background to remove', { video: 50 }, { facts: FACTS }),
  },
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height'], multipart: true },
  media: 'video',
  plans: VIDEO_PLANS,
});
