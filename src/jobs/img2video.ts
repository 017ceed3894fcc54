import { image, text, VIDEO_PARAMS, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkFramedVideo } from './model-checks.js';

/** Image to video: `POST /img2video`, multipart with the frames as file parts. */
export const img2video: JobKind<'img2video'> = defineKind({
  type: 'img2video',
  title: 'Image to video',
  params: VIDEO_PARAMS,
  content: {
    prompt: text('What should happen in the video'),
    first_frame_image: image('First frame'),
    last_frame_image: { ...image('Last frame, where the model supports it'), optional: true },
  },
  checkModel: checkFramedVideo,
  // What its price depends on: no images, guidance or seed.
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height', 'steps', 'frames', 'fps'] },
  media: 'video',
  plans: VIDEO_PLANS,
});
