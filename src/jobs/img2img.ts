import { guidance, image, loras, media, model, negativePrompt, positiveInt, seed, text } from './fields.js';
import { defineKind, type JobKind } from './kind.js';
import { checkBounds, checkLoras, limitOf } from './model-checks.js';

/**
 * Image to image: `POST /img2img`, multipart with the image (`image`) or the images (`images[]`)
 * to edit; the result is an image. Priced without the images, by the model, steps, guidance and
 * LoRAs: the call carries what the document requires of it (prompt and seed, the group's first).
 */
export const img2img: JobKind<'img2img'> = defineKind({
  type: 'img2img',
  title: 'Image to image: give image or images',
  params: {
    model: model('QwenImageEdit_Plus_NF4'),
    steps: positiveInt('Inference steps'),
    seed,
    guidance: { ...guidance, optional: true },
    negative_prompt: negativePrompt,
    loras,
    width: { ...positiveInt('Result width in pixels; left out, the first image\'s'), optional: true },
    height: { ...positiveInt('Result height in pixels; left out, the first image\'s'), optional: true },
  },
  content: {
    prompt: text('The edit to make'),
    image: image('The image to edit'),
    images: media('The images to edit together, as many as the model takes', { image: 10 }, { list: true }),
  },
  exactlyOne: ['image', 'images'],
  checkModel: (job, found, models, report) => {
    checkBounds(job.params, found, ['width', 'height', 'steps'], report);
    checkLoras(job.params, found, models, report);
    const count = Object.keys({ ...job.media, ...job.inputs }).filter((key) => key.startsWith('images.')).length;
    const most = limitOf(found, 'max_input_images') ?? 1;
    if (count > most) {
      report('images', `at most ${most} image${most === 1 ? '' : 's'} for ${found.slug}`, { text: `${count} images` });
    }
  },
  pricing: {
    by: 'per-key',
    keyFields: ['model', 'steps', 'guidance', 'loras'],
    carries: ['prompt', 'negative_prompt', 'model', 'loras', 'guidance', 'steps', 'seed'],
  },
  media: 'image',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
