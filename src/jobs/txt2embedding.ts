import * as z from 'zod';
import { model, text } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/** Text to embedding: `POST /txt2embedding`, JSON; the result is a list of numbers, written as `<id>.json`. */
export const txt2embedding: JobKind<'txt2embedding'> = defineKind({
  type: 'txt2embedding',
  title: 'Text to embedding',
  params: {
    model: model('Bge_M3_FP16'),
    return_result_in_response: {
      schema: z.boolean().describe('Whether the embedding comes in the status itself, not only as a file'),
      expected: 'true or false',
      optional: true,
    },
  },
  content: { input: text('The text to embed') },
  // Priced by its input: jobs with the same text and model share one price call.
  pricing: { by: 'per-key', keyFields: ['model', 'input'] },
  media: 'embedding',
  plans: { basic: { perMinute: 10, perDay: 500 }, premium: { perMinute: 300 } },
});
