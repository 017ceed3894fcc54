/** Text to speech: `POST /txt2audio`, JSON, or multipart with a voice to clone; the result is a WAV. */
import type { SimLanguage, SimVoice } from '../catalogue.js';
import { charCount, type Check } from '../rules.js';
import { defineKind } from './kind.js';
import { referenceAudio } from './reference-audio.js';

const AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
const MODES = ['custom_voice', 'voice_clone', 'voice_design'] as const;
/** The document's bounds of a voice to clone. */
const REF_SECONDS = { min: 3, max: 10 };
/** USD per character at speed 1 (the published rate: about $0.77 per million characters). */
const USD_PER_CHAR = 0.77e-6;

export const AUDIO_FEATURES = { supported_formats: [...AUDIO_FORMATS], supported_sample_rates: [...SAMPLE_RATES] };
export const AUDIO_LIMITS = { min_speed: 0.5, max_speed: 2, min_text: 1, max_text: 5000 };
export const AUDIO_DEFAULTS = { speed: 1, format: 'mp3', sample_rate: 24000 };

function voice(slug: string, gender: string): SimVoice {
  const name = slug.replace(/^[a-z]+_/, '');
  return { name: name.charAt(0).toUpperCase() + name.slice(1), slug, gender };
}

export const iso = (name: string, slug: string): SimLanguage =>
  ({ name, slug, voices: [{ name: 'Default', slug: 'default', gender: 'neutral' }] });

const qwenLanguages = (voices: SimVoice[]): SimLanguage[] =>
  ['English', 'French', 'German', 'Spanish', 'Chinese'].map((name) => ({ name, slug: name, voices }));

/** The text's length in characters; a price query may give `count_text` instead (then `text` is null). */
function textLength(c: Check, forPrice: boolean): { chars: number | undefined; text?: string | null | undefined } {
  const min = c.model?.limits['min_text'] ?? 1;
  const max = c.model?.limits['max_text'] ?? 5000;
  if (forPrice && (typeof c.fields['text'] !== 'string' || c.fields['text'] === '')) {
    const count = c.fields['count_text'];
    if (count === undefined || count === null || count === '') {
      return { chars: c.add('count_text', 'The count text field is required when text is not present.') };
    }
    return { chars: c.number('count_text', { integer: true, min, max }), text: null };
  }
  const text = c.string('text');
  if (text === undefined) return { chars: undefined };
  const chars = charCount(text);
  if (chars < min) c.add('text', `The text field must be at least ${min} characters.`);
  else if (chars > max) c.add('text', `The text field must not be greater than ${max} characters.`);
  return { chars, text };
}

/** A voice of the language asked for (without a valid language, of the model), which only preset voices need. */
type Voice = { lang: string | undefined; voice: string | null | undefined };

function languageAndVoice(c: Check, presetVoice: boolean): Voice {
  const lang = c.string('lang');
  const language = c.model && lang !== undefined ? c.model.languages.find((l) => l.slug === lang) : undefined;
  if (c.model && lang !== undefined && !language) c.add('lang', 'The selected lang is invalid.');
  const voice = presetVoice ? c.string('voice') : c.optional('voice');
  if (voice === null) return { lang, voice };
  const voices = language ? language.voices : (c.model?.languages.flatMap((l) => l.voices) ?? []);
  if (c.model && voice !== undefined && !voices.some((v) => v.slug === voice)) {
    c.add('voice', 'The selected voice is invalid.');
  }
  return { lang, voice };
}

/** The text and how it is read out. */
const speech = (c: Check, forPrice: boolean) => ({
  ...textLength(c, forPrice),
  speed: c.number('speed', c.range('speed')),
  format: c.oneOf('format', c.string('format'), AUDIO_FORMATS),
  sampleRate: c.oneOf('sample_rate', c.number('sample_rate', { integer: true }), SAMPLE_RATES),
});

export const txt2audio = defineKind({
  type: 'txt2audio',
  models: [
    {
      name: 'Kokoro 82M',
      slug: 'Kokoro',
      limits: AUDIO_LIMITS,
      features: AUDIO_FEATURES,
      defaults: { ...AUDIO_DEFAULTS, lang: 'en-us', voice: 'af_sky' },
      languages: [
        {
          name: 'English (US)',
          slug: 'en-us',
          voices: [voice('af_sky', 'female'), voice('af_bella', 'female'), voice('am_adam', 'male')],
        },
        { name: 'English (UK)', slug: 'en-gb', voices: [voice('bf_emma', 'female'), voice('bm_george', 'male')] },
        { name: 'Spanish', slug: 'es', voices: [voice('ef_dora', 'female')] },
        { name: 'French', slug: 'fr-fr', voices: [voice('ff_siwis', 'female')] },
      ],
    },
    {
      name: 'Chatterbox',
      slug: 'Chatterbox',
      limits: { ...AUDIO_LIMITS, max_text: 3000 },
      features: AUDIO_FEATURES,
      defaults: { ...AUDIO_DEFAULTS, lang: 'en', voice: 'default' },
      languages: [iso('English', 'en'), iso('French', 'fr'), iso('German', 'de'), iso('Spanish', 'es')],
      priceFactor: 1.3,
    },
    {
      name: 'Qwen3 TTS 1.7B Custom Voice',
      slug: 'Qwen3_TTS_12Hz_1_7B_CustomVoice',
      typesAsObject: true,
      limits: { ...AUDIO_LIMITS, max_text: 4000 },
      features: AUDIO_FEATURES,
      defaults: { ...AUDIO_DEFAULTS, lang: 'English', voice: 'Vivian' },
      languages: qwenLanguages([voice('Vivian', 'female'), voice('Ryan', 'male'), voice('Serena', 'female')]),
      priceFactor: 1.6,
    },
    // Without info the service states no bounds; the simulator still enforces the common ones.
    {
      name: 'Qwen3 TTS 1.7B Base',
      slug: 'Qwen3_TTS_12Hz_1_7B_Base',
      emptyInfo: true,
      limits: AUDIO_LIMITS,
      languages: qwenLanguages([voice('default', 'neutral')]),
      priceFactor: 1.6,
    },
  ],
  check: async (c, forPrice) => {
    const given = c.optional('mode');
    const mode = given === null ? 'custom_voice' : c.oneOf('mode', given, MODES);
    const voice = {
      ...languageAndVoice(c, mode === 'custom_voice'),
      instruct: c.optional('instruct'),
      ...(!forPrice && {
        refText: c.optional('ref_text'),
        refAudio: await referenceAudio(c, 'ref_audio', mode === 'voice_clone', REF_SECONDS),
      }),
    };
    return { mode, ...voice, ...speech(c, forPrice) };
  },

  usd: (p) => (p.chars * USD_PER_CHAR * p.model.priceFactor) / p.speed,
  media: 'audio',
  plans: { basic: { perMinute: 5, perDay: 300 }, premium: { perMinute: 300 } },
});
