import type { Model } from '../api/types.js';
import { guidance, loras, model, negativePrompt, positiveInt, seed, text } from './fields.js';
import { defineKind, type JobKind, type ReportProblem } from './kind.js';
import { checkBounds, checkLoras, limitOf } from './model-checks.js';

/** Text to image: `POST /txt2img`, JSON; the result is a PNG, JPEG or WebP image. */
export const txt2img: JobKind<'txt2img'> = defineKind({
  type: 'txt2img',
  title: 'Text to image',
  params: {
    model: model('Flux1schnell'),
    width: positiveInt('Image width in pixels'),
    height: positiveInt('Image height in pixels'),
    guidance,
    steps: positiveInt('Inference steps'),
    seed,
    negative_prompt: negativePrompt,
    loras,
  },
  content: { prompt: text('What the image shows') },
  checkModel: (job, found, models, report) => {
    checkBounds(job.params, found, ['width', 'height', 'steps'], report);
    checkResolutionStep(job.params, found, report);
    checkGuidance(job.params, found, report);
    checkLoras(job.params, found, models, report);
  },
  /**
   * The price endpoint requires what a submit carries, prompt and seed too, but a price that
   * changed with the words of a prompt would be no price list at all: jobs that differ only in
   * prompt or seed share one call (the request carries the group's first prompt and seed).
   */
  pricing: { by: 'per-key', keyFields: ['model', 'width', 'height', 'guidance', 'steps', 'loras'], carries: 'submit' },
  media: 'image',
  plans: { basic: { perMinute: 3, perDay: 100 }, premium: { perMinute: 300 } },
});

/** Width and height must be multiples of the model's `resolution_step`. */
function checkResolutionStep(params: Readonly<Record<string, unknown>>, found: Model, report: ReportProblem): void {
  const step = limitOf(found, 'resolution_step');
  if (step === undefined || step <= 1) return;
  for (const field of ['width', 'height']) {
    const value = params[field];
    if (typeof value === 'number' && value % step !== 0) {
      const near = Math.max(step, Math.round(value / step) * step);
      report(field, `a multiple of ${step} for ${found.slug}`, { value }, `try ${near}`);
    }
  }
}

function checkGuidance(params: Readonly<Record<string, unknown>>, found: Model, report: ReportProblem): void {
  const value = params['guidance'];
  if (found.features['supports_guidance'] === false && typeof value === 'number' && value !== 0) {
    report('guidance', `0 for ${found.slug} (it does not use guidance)`, { value });
  }
}
