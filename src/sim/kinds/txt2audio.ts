/** Text to speech: `POST /txt2audio`, JSON; the result is a WAV. */
import type { SimLanguage, SimModel, SimVoice } from '../catalogue.js';
import { fingerprint } from '../fingerprint.js';
import { applyMode, type PricingMode } from '../pricing.js';
import { wavTone } from '../results.js';
import { charCount, ErrorBag, oneOf, requiredNumber, requiredString, type Fields } from '../rules.js';
import { lookupModel, mapValid, type Validated } from '../validate.js';
import type { Models, SimKind } from './kind.js';

const TYPE = 'txt2audio';
export const AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
/** USD per character at speed 1 (the published rate: about $0.77 per million characters). */
const USD_PER_CHAR = 0.77e-6;

export const AUDIO_FEATURES = { supported_formats: [...AUDIO_FORMATS], supported_sample_rates: [...SAMPLE_RATES] };
export const AUDIO_LIMITS = { min_speed: 0.5, max_speed: 2, min_text: 1, max_text: 5000 };
export const AUDIO_DEFAULTS = { speed: 1, format: 'mp3', sample_rate: 24000 };

function voice(slug: string, gender: string): SimVoice {
  const name = slug.replace(/^[a-z]+_/, '');
  return { name: name.charAt(0).toUpperCase() + name.slice(1), slug, gender };
}

export const iso = (name: string, slug: string): SimLanguage => ({ name, slug, voices: [{ name: 'Default', slug: 'default', gender: 'neutral' }] });

const KOKORO: SimModel = {
  name: 'Kokoro 82M',
  slug: 'Kokoro',
  types: [TYPE],
  limits: AUDIO_LIMITS,
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'en-us', voice: 'af_sky' },
  languages: [
    { name: 'English (US)', slug: 'en-us', voices: [voice('af_sky', 'female'), voice('af_bella', 'female'), voice('am_adam', 'male')] },
    { name: 'English (UK)', slug: 'en-gb', voices: [voice('bf_emma', 'female'), voice('bm_george', 'male')] },
    { name: 'Spanish', slug: 'es', voices: [voice('ef_dora', 'female')] },
    { name: 'French', slug: 'fr-fr', voices: [voice('ff_siwis', 'female')] },
  ],
  priceFactor: 1,
};

const CHATTERBOX: SimModel = {
  name: 'Chatterbox',
  slug: 'Chatterbox',
  types: [TYPE],
  limits: { ...AUDIO_LIMITS, max_text: 3000 },
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'en', voice: 'default' },
  languages: [iso('English', 'en'), iso('French', 'fr'), iso('German', 'de'), iso('Spanish', 'es')],
  priceFactor: 1.3,
};

const qwenLanguages = (voices: SimVoice[]): SimLanguage[] =>
  ['English', 'French', 'German', 'Spanish', 'Chinese'].map((name) => ({ name, slug: name, voices }));

const QWEN_CUSTOM: SimModel = {
  name: 'Qwen3 TTS 1.7B Custom Voice',
  slug: 'Qwen3_TTS_12Hz_1_7B_CustomVoice',
  types: [TYPE],
  typesAsObject: true,
  limits: { ...AUDIO_LIMITS, max_text: 4000 },
  features: AUDIO_FEATURES,
  defaults: { ...AUDIO_DEFAULTS, lang: 'English', voice: 'Vivian' },
  languages: qwenLanguages([voice('Vivian', 'female'), voice('Ryan', 'male'), voice('Serena', 'female')]),
  priceFactor: 1.6,
};

// Without info the service states no bounds; the simulator still enforces the common ones.
const QWEN_BASE: SimModel = {
  name: 'Qwen3 TTS 1.7B Base',
  slug: 'Qwen3_TTS_12Hz_1_7B_Base',
  types: [TYPE],
  emptyInfo: true,
  limits: AUDIO_LIMITS,
  features: {},
  defaults: {},
  languages: qwenLanguages([voice('default', 'neutral')]),
  priceFactor: 1.6,
};

interface AudioParams {
  model: SimModel;
  lang: string;
  voice: string;
  speed: number;
  format: string;
  sampleRate: number;
  chars: number;
  /** Absent on a price query by count_text. */
  text?: string | undefined;
}

function textLength(bag: ErrorBag, fields: Fields, model: SimModel | undefined, forPrice: boolean): { chars?: number; text?: string } {
  const min = model?.limits['min_text'] ?? 1;
  const max = model?.limits['max_text'] ?? 5000;
  const hasText = typeof fields['text'] === 'string' && fields['text'] !== '';
  if (forPrice && !hasText) {
    if (fields['count_text'] === undefined || fields['count_text'] === null || fields['count_text'] === '') {
      bag.add('count_text', 'The count text field is required when text is not present.');
      return {};
    }
    const chars = requiredNumber(bag, fields, 'count_text', { integer: true, min, max });
    return chars === undefined ? {} : { chars };
  }
  const text = requiredString(bag, fields, 'text');
  if (text === undefined) return {};
  const chars = charCount(text);
  if (chars < min) bag.add('text', `The text field must be at least ${min} characters.`);
  else if (chars > max) bag.add('text', `The text field must not be greater than ${max} characters.`);
  return { chars, text };
}

/** A submit (`forPrice` false) or a price query (text or count_text). */
function validateAudio(fields: Fields, models: Models, forPrice: boolean): Validated<AudioParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, TYPE);
  const { chars, text } = textLength(bag, fields, model, forPrice);
  const langSlug = requiredString(bag, fields, 'lang');
  const language = model && langSlug !== undefined ? model.languages.find((l) => l.slug === langSlug) : undefined;
  if (model && langSlug !== undefined && !language) bag.add('lang', 'The selected lang is invalid.');
  const voiceSlug = requiredString(bag, fields, 'voice');
  // A voice must belong to the language asked for; without a valid language, to the model.
  const voices = language ? language.voices : (model?.languages.flatMap((l) => l.voices) ?? []);
  if (model && voiceSlug !== undefined && !voices.some((v) => v.slug === voiceSlug)) bag.add('voice', 'The selected voice is invalid.');
  const speed = requiredNumber(bag, fields, 'speed', { min: model?.limits['min_speed'], max: model?.limits['max_speed'] });
  const format = oneOf(bag, 'format', requiredString(bag, fields, 'format'), AUDIO_FORMATS);
  const sampleRate = oneOf(bag, 'sample_rate', requiredNumber(bag, fields, 'sample_rate', { integer: true }), SAMPLE_RATES);
  if (!bag.empty || !model || chars === undefined || langSlug === undefined || voiceSlug === undefined
    || speed === undefined || format === undefined || sampleRate === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { model, lang: langSlug, voice: voiceSlug, speed, format, sampleRate, chars, text } };
}

function price(p: AudioParams, mode: PricingMode): number {
  return applyMode((p.chars * USD_PER_CHAR * p.model.priceFactor) / p.speed, mode);
}

export const txt2audio: SimKind<typeof TYPE> = {
  type: TYPE,
  models: [KOKORO, CHATTERBOX, QWEN_CUSTOM, QWEN_BASE],
  price: (fields, models, mode) => mapValid(validateAudio(fields, models, true), (p) => price(p, mode)),
  submit: (fields, models, mode) => mapValid(validateAudio(fields, models, false), (p) => ({
    fingerprint: fingerprint([TYPE, p.model.slug, p.lang, p.voice, p.speed, p.format, p.sampleRate, p.text ?? '']),
    priceUsd: price(p, mode),
  })),
  result: { ending: 'wav', contentType: 'audio/wav', bytes: () => wavTone() },
  pace: { pendingMs: 50, processingMs: 200 },
  plans: { basic: { perMinute: 5, perDay: 300 }, premium: { perMinute: 300 } },
};
