/**
 * Validation of generation and price requests against the model record, as the service's
 * Laravel form requests do: every problem collected into one 422 error bag.
 */
import { createHash } from 'node:crypto';
import { AUDIO_FORMATS, SAMPLE_RATES, type SimModel } from './catalogue.js';
import { IMAGE_TYPES_TEXT, MAX_IMAGE_BYTES, sniffImageType } from './images.js';
import {
  attribute, charCount, ErrorBag, oneOf, optionalString, requiredNumber, requiredString, type Fields,
} from './rules.js';

export interface AudioParams {
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

export interface VideoParams {
  model: SimModel;
  width: number;
  height: number;
  steps: number;
  frames: number;
  fps: number;
  /** The fields below are present on submits only. */
  prompt?: string | undefined;
  negativePrompt?: string | undefined;
  guidance?: number | undefined;
  seed?: number | undefined;
  firstImageSha256?: string | undefined;
  lastImageSha256?: string | undefined;
}

export interface ImageParams {
  model: SimModel;
  prompt: string;
  negativePrompt?: string | undefined;
  width: number;
  height: number;
  steps: number;
  guidance: number;
  seed: number;
  loras: { name: string; weight: number }[];
}

export type Validated<T> = { ok: true; value: T } | { ok: false; bag: ErrorBag };

function lookupModel(bag: ErrorBag, fields: Fields, models: ReadonlyMap<string, SimModel>, type: string): SimModel | undefined {
  const slug = requiredString(bag, fields, 'model');
  if (slug === undefined) return undefined;
  const model = models.get(slug);
  if (!model || !model.types.includes(type)) return bag.add('model', 'The selected model is invalid.');
  return model;
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

/** Validates a txt2audio submit (`forPrice` false) or price query (text or count_text). */
export function validateAudio(fields: Fields, models: ReadonlyMap<string, SimModel>, forPrice: boolean): Validated<AudioParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, 'txt2audio');
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

function bounded(bag: ErrorBag, fields: Fields, model: SimModel | undefined, field: string): number | undefined {
  return requiredNumber(bag, fields, field, { integer: true, min: model?.limits[`min_${field}`], max: model?.limits[`max_${field}`] });
}

async function imageDigest(bag: ErrorBag, fields: Fields, field: string, required: boolean): Promise<string | undefined> {
  const value = fields[field];
  const name = attribute(field);
  if (value === undefined || value === null || value === '') {
    return required ? bag.add(field, `The ${name} field is required.`) : undefined;
  }
  if (!(value instanceof Blob)) return bag.add(field, `The ${name} field must be a file.`);
  if (value.size > MAX_IMAGE_BYTES) return bag.add(field, `The ${name} field must not be greater than ${MAX_IMAGE_BYTES / 1024} kilobytes.`);
  const bytes = new Uint8Array(await value.arrayBuffer());
  if (!sniffImageType(bytes)) return bag.add(field, `The ${name} field must be a file of type: ${IMAGE_TYPES_TEXT}.`);
  return createHash('sha256').update(bytes).digest('hex');
}

/** Validates a video price query (image or text to video): model and the numbers that set the price. */
export function validateVideoPrice(fields: Fields, models: ReadonlyMap<string, SimModel>, type: 'img2video' | 'txt2video' = 'img2video'): Validated<VideoParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, type);
  const [width, height, steps, frames, fps] = ['width', 'height', 'steps', 'frames', 'fps'].map((f) => bounded(bag, fields, model, f));
  if (!bag.empty || !model || width === undefined || height === undefined || steps === undefined || frames === undefined || fps === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { model, width, height, steps, frames, fps } };
}

/** What a video submit adds to its price query, image or text to video alike. */
function videoContent(bag: ErrorBag, fields: Fields, model: SimModel | undefined) {
  return {
    prompt: requiredString(bag, fields, 'prompt'),
    negativePrompt: optionalString(bag, fields, 'negative_prompt'),
    guidance: requiredNumber(bag, fields, 'guidance', { min: model?.limits['min_guidance'], max: model?.limits['max_guidance'] }),
    seed: requiredNumber(bag, fields, 'seed', { integer: true, min: -1 }),
  };
}

/** Validates an img2video submit, images included (type by magic bytes, size, last frame support). */
export async function validateVideoSubmit(fields: Fields, models: ReadonlyMap<string, SimModel>): Promise<Validated<VideoParams>> {
  const priced = validateVideoPrice(fields, models);
  const bag = priced.ok ? new ErrorBag() : priced.bag;
  const model = priced.ok ? priced.value.model : undefined;
  const { prompt, negativePrompt, guidance, seed } = videoContent(bag, fields, model);
  const firstImageSha256 = await imageDigest(bag, fields, 'first_frame_image', true);
  let lastImageSha256: string | undefined;
  const lastGiven = fields['last_frame_image'] !== undefined && fields['last_frame_image'] !== null && fields['last_frame_image'] !== '';
  if (lastGiven && model && model.features['supports_last_frame'] !== true) {
    bag.add('last_frame_image', 'The last frame image field is prohibited.');
  } else {
    lastImageSha256 = await imageDigest(bag, fields, 'last_frame_image', false);
  }
  if (!priced.ok || !bag.empty || prompt === undefined || guidance === undefined || seed === undefined || firstImageSha256 === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { ...priced.value, prompt, negativePrompt, guidance, seed, firstImageSha256, lastImageSha256 } };
}

/** Validates a txt2video submit: a video price query plus prompt, guidance and seed (JSON, no images). */
export function validateTextVideoSubmit(fields: Fields, models: ReadonlyMap<string, SimModel>): Validated<VideoParams> {
  const priced = validateVideoPrice(fields, models, 'txt2video');
  const bag = priced.ok ? new ErrorBag() : priced.bag;
  const model = priced.ok ? priced.value.model : undefined;
  const { prompt, negativePrompt, guidance, seed } = videoContent(bag, fields, model);
  if (!priced.ok || !bag.empty || prompt === undefined || guidance === undefined || seed === undefined) return { ok: false, bag };
  return { ok: true, value: { ...priced.value, prompt, negativePrompt, guidance, seed } };
}

/** A size within the model's bounds and a multiple of its `resolution_step`. */
function sized(bag: ErrorBag, fields: Fields, model: SimModel | undefined, field: 'width' | 'height'): number | undefined {
  const value = bounded(bag, fields, model, field);
  const step = model?.limits['resolution_step'];
  if (value !== undefined && step !== undefined && value % step !== 0) return bag.add(field, `The ${field} field must be a multiple of ${step}.`);
  return value;
}

function loraList(bag: ErrorBag, fields: Fields, model: SimModel | undefined): { name: string; weight: number }[] {
  const raw = fields['loras'];
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
  if (!Array.isArray(raw)) return bag.add('loras', 'The loras field must be an array.') ?? [];
  if (model !== undefined && (model.loras ?? []).length === 0) return bag.add('loras', 'The loras field is prohibited.') ?? [];
  const offered = new Set((model?.loras ?? []).map((lora) => lora.name));
  const loras: { name: string; weight: number }[] = [];
  raw.forEach((item: unknown, i) => {
    const { name, weight } = (item ?? {}) as { name?: unknown; weight?: unknown };
    if (typeof name !== 'string' || name === '') bag.add(`loras.${i}.name`, `The loras.${i}.name field is required.`);
    else if (model !== undefined && !offered.has(name)) bag.add(`loras.${i}.name`, `The selected loras.${i}.name is invalid.`);
    if (typeof weight !== 'number' || !Number.isFinite(weight)) bag.add(`loras.${i}.weight`, `The loras.${i}.weight field must be a number.`);
    else if (weight < 0) bag.add(`loras.${i}.weight`, `The loras.${i}.weight field must be at least 0.`);
    if (typeof name === 'string' && typeof weight === 'number') loras.push({ name, weight });
  });
  return loras;
}

/**
 * Validates a txt2img submit or price query: both require the same seven fields. A model without
 * guidance support takes the field and ignores it.
 */
export function validateImage(fields: Fields, models: ReadonlyMap<string, SimModel>): Validated<ImageParams> {
  const bag = new ErrorBag();
  const model = lookupModel(bag, fields, models, 'txt2img');
  const prompt = requiredString(bag, fields, 'prompt');
  const negativePrompt = optionalString(bag, fields, 'negative_prompt');
  const width = sized(bag, fields, model, 'width');
  const height = sized(bag, fields, model, 'height');
  const steps = bounded(bag, fields, model, 'steps');
  const guidance = requiredNumber(bag, fields, 'guidance', { min: 0 });
  const seed = requiredNumber(bag, fields, 'seed', { integer: true, min: -1 });
  const loras = loraList(bag, fields, model);
  if (!bag.empty || !model || prompt === undefined || width === undefined || height === undefined || steps === undefined
    || guidance === undefined || seed === undefined) {
    return { ok: false, bag };
  }
  return { ok: true, value: { model, prompt, negativePrompt, width, height, steps, guidance, seed, loras } };
}
