import * as z from 'zod';
import type { Model } from '../api/types.js';
import { audioFormat, model, referenceAudio, slug, text } from './fields.js';
import { defineKind, type FieldSpec, type JobKind, type ReportProblem } from './kind.js';
import { boundsText, limitOf, outside } from './model-checks.js';

/** How the voice is chosen: a preset voice (the service's default), a recording to clone, or a description. */
const MODES = ['custom_voice', 'voice_clone', 'voice_design'] as const;

const optionalText = (description: string): FieldSpec => ({ ...slug(description, 'text'), optional: true });

/** What a speech request carries besides the text, and what its price depends on besides the length. */
const PARAMS = ['model', 'voice', 'lang', 'speed', 'format', 'sample_rate'] as const;

/**
 * Text to speech: `POST /txt2audio`, JSON (as the service's clients send it), multipart when it
 * uploads a voice to clone; priced by character count.
 */
export const txt2audio: JobKind<'txt2audio'> = defineKind({
  type: 'txt2audio',
  title: 'Text to speech: give text or text_file',
  params: {
    model: model('Kokoro'),
    mode: {
      schema: z
        .enum(MODES)
        .describe('custom_voice (a preset voice, the default), voice_clone (ref_audio) or voice_design (instruct)'),
      expected: 'one of "custom_voice", "voice_clone", "voice_design"',
      optional: true,
    },
    voice: {
      ...slug('Voice slug of that model and language, e.g. af_sky; none to clone or design one', 'a voice slug'),
      optional: true,
      requiredWhen: { field: 'mode', in: [undefined, 'custom_voice'] },
    },
    lang: slug('Language slug of that model, e.g. en-us', 'a language slug'),
    speed: { schema: z.number().gt(0).describe('Speech speed; 1 is normal'), expected: 'a number above 0' },
    format: audioFormat,
    sample_rate: { schema: z.int().min(1).describe('Sample rate in Hz, e.g. 24000'), expected: 'a whole number of Hz above 0' },
    ref_text: optionalText('What the voice recording (ref_audio) says, for a closer clone'),
    instruct: optionalText('The voice described (voice_design), or the style and emotion (custom_voice)'),
  },
  content: {
    text: text('The text to speak; give text or text_file'),
    text_file: { ...slug("A UTF-8 text file inside the manifest's folder", 'a path to a UTF-8 text file'), file: 'text' },
    ref_audio: {
      ...referenceAudio('The voice to clone (voice_clone), 3 to 10 seconds', { min: 3, max: 10 }),
      requiredWhen: { field: 'mode', in: ['voice_clone'] },
    },
  },
  exactlyOne: ['text', 'text_file'],
  textFrom: { file: 'text_file', field: 'text' },
  splittable: { field: 'text', maxChars: (found) => limitOf(found, 'max_text') },
  checkModel: (job, found, _models, report) => checkSpeech(job.params, job.textChars ?? 0, job.textFile !== undefined, found, report),
  // The mode and the description price too; the recording and its transcript do not.
  pricing: { by: 'per-length', keyFields: PARAMS, laterKeyFields: ['mode', 'instruct'], lengthField: 'count_text' },
  body: 'json-unless-files',
  media: 'audio',
  plans: { basic: { perMinute: 5, perDay: 300 }, premium: { perMinute: 300 } },
});

function checkSpeech(
  params: Readonly<Record<string, unknown>>,
  chars: number,
  fromFile: boolean,
  found: Model,
  report: ReportProblem,
): void {
  const { lang, voice, speed } = params as { lang: string; voice?: string; speed: number };
  if (found.languages.length > 0) {
    const language = found.languages.find((candidate) => candidate.slug === lang);
    if (language === undefined) {
      report('lang', `a language of ${found.slug}`, { value: lang }, `languages of ${found.slug}: ${found.languages.map((l) => l.slug).join(', ')}`);
    } else if (voice !== undefined && !language.voices.some((candidate) => candidate.slug === voice)) {
      const elsewhere = found.languages.find((other) => other.voices.some((candidate) => candidate.slug === voice));
      const also = elsewhere === undefined ? '' : ` (${voice} is a voice for ${elsewhere.slug})`;
      const hint = `voices for ${lang}: ${language.voices.map((v) => v.slug).join(', ')}${also}`;
      report('voice', `a voice of ${found.slug} for ${lang}`, { value: voice }, hint);
    }
  }
  const [minSpeed, maxSpeed] = [limitOf(found, 'min_speed'), limitOf(found, 'max_speed')];
  const speedBounds = boundsText(minSpeed, maxSpeed);
  if (speedBounds !== undefined && outside(speed, minSpeed, maxSpeed)) {
    report('speed', `a number ${speedBounds} for ${found.slug}`, { value: speed });
  }
  const [minText, maxText] = [limitOf(found, 'min_text'), limitOf(found, 'max_text')];
  const textBounds = boundsText(minText, maxText);
  if (textBounds !== undefined && outside(chars, minText, maxText)) {
    const hint = maxText !== undefined && chars > maxText ? 'add `split: sentences` to cut it into parts, or split it into several jobs' : undefined;
    report(fromFile ? 'text_file' : 'text', `${textBounds} characters for ${found.slug}`, { text: `${chars} characters` }, hint);
  }
}
