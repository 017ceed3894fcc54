import { image, media, model, positiveInt, seed, text, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/**
 * Character replacement: `POST /videos/replace`, multipart with the video and the reference image;
 * the result is a video. Priced by the video's length and the output size (the job's, else the
 * video's own), read from the file when the manifest is, so its bytes are uploaded once, with the
 * submit. API.md's rate table leaves it out: it takes the other video kinds' limits.
 */
const FACTS = { duration: 'durationSec', video_width: 'width', video_height: 'height' } as const;

const optional = { optional: true } as const;

export const videoReplace: JobKind<'video-replace'> = defineKind({
  type: 'video-replace',
  title: 'Character replacement in a video',
  paths: { submit: 'videos/replace', price: 'videos/replace/price' },
  params: {
    model: model('Wan2_2_Animate_14B_INT8'),
    width: { ...positiveInt("Output width in pixels, with height (default: the video's)"), ...optional },
    height: { ...positiveInt("Output height in pixels, with width (default: the video's)"), ...optional },
    steps: { ...positiveInt('Inference steps (the service takes 4 when left out)'), ...optional },
    seed: { ...seed, ...optional },
  },
  content: {
    // The document states no size limit for it: the other video fields' 50 MB.
    video: media('The video whose person is replaced', { video: 50 }, { facts: FACTS }),
    ref_image: image('The character to put in'),
    prompt: { ...text('What the replacement should look like'), ...optional },
  },
  checkModel: (job, _found, _models, report) => {
    const [width, height] = [job.params['width'], job.params['height']];
    if ((width === undefined) !== (height === undefined)) {
      const [missing, given] = width === undefined ? ['width', 'height'] : ['height', 'width'];
      report(missing, `a ${missing} too, as ${given} is given`, { text: 'nothing' }, `give both sides, or neither`);
    }
  },
  pricing: {
    by: 'per-key',
    keyFields: ['model', 'duration', 'width', 'height', 'video_width', 'video_height'],
    multipart: true,
    // The output size is the video's own unless the job gives one; the video itself is not sent.
    body: ({ model: slug, duration, width, height, video_width, video_height }) => ({
      model: slug,
      duration,
      width: width ?? video_width,
      height: height ?? video_height,
    }),
  },
  media: 'video',
  plans: VIDEO_PLANS,
});
