import * as z from 'zod';
import { image, model, SIDES } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/** OCR: `POST /img2txt`, multipart with the image; the result is its text, written as `<id>.txt`. */
export const img2txt: JobKind<'img2txt'> = defineKind({
  type: 'img2txt',
  title: 'Image to text (OCR)',
  params: {
    model: model('Nanonets_Ocr_S_F16'),
    language: {
      schema: z.string().min(1).describe('Language of the text, e.g. en'),
      expected: 'a language code',
      optional: true,
    },
    format: {
      schema: z.enum(['text', 'json']).describe('How the service gives the text: plain, or JSON'),
      expected: 'text or json',
      optional: true,
    },
    return_result_in_response: {
      schema: z.boolean().describe('Whether the text comes in the status itself, not only as a file'),
      expected: 'true or false',
      optional: true,
    },
  },
  content: { image: image('The image to read', { facts: SIDES }) },
  // Priced by the image's sides, never its bytes: pages of one size share one price call.
  pricing: { by: 'per-key', keyFields: ['model', 'language', 'format', 'width', 'height'], multipart: true },
  media: 'text',
  plans: { basic: { perMinute: 5, perDay: 50 }, premium: { perMinute: 300 } },
});
