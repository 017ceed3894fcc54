import { image, media, model, text, VIDEO_PARAMS, VIDEO_PLANS } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkFramedVideo } from './model-checks.js';

/** The document lists MP3 and OGG; the service's docs and its own tester take WAV and FLAC too. */
const SOUND_FORMATS = ['MP3', 'MPEG audio', 'Ogg', 'WAV', 'FLAC'];

/**
 * Audio to video: `POST /aud2video`, multipart with the sound and the frames as file parts; the
 * result is a video. Priced by its numbers alone, as image to video is: the sound is not sent.
 */
export const aud2video: JobKind<'aud2video'> = defineKind({
  type: 'aud2video',
  title: 'Audio to video',
  catalogueTypes: ['audio2video'],
  params: {
    ...VIDEO_PARAMS,
    model: model('Ltx2_3_22B_Dist_INT8'),
    steps: { ...VIDEO_PARAMS['steps']!, optional: true },
    guidance: { ...VIDEO_PARAMS['guidance']!, optional: true },
  },
  content: {
    prompt: text('What should happen in the video'),
    audio: media('The sound the video follows', { audio: 20 }, { formats: SOUND_FORMATS }),
    first_frame_image: { ...image('First frame'), optional: true },
    last_frame_image: { ...image('Last frame, where the model supports it'), optional: true },
  },
  checkModel: checkFramedVideo,
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height', 'steps', 'frames', 'fps'] },
  media: 'video',
  plans: VIDEO_PLANS,
});
