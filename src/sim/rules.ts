/**
 * Laravel-style field rules, applied as the service's form requests apply them: each records its
 * message in one error bag (a 422 with every problem) and returns the parsed value, or undefined.
 * Messages follow Laravel's wording, so clients see what the service sends.
 */
import { createHash } from 'node:crypto';
import { type FileMedia, SNIFF_BYTES, sniffMedia } from '../media-type.js';
import { imageSides, type ImageSides, sidesAllowed } from '../image-sides.js';
import type { SimModel } from './catalogue.js';

/** A form value: JSON scalars, multipart strings, or multipart files. */
export type FieldValue = string | number | boolean | null | undefined | Blob | object;
export type Fields = Record<string, FieldValue>;

export interface NumberRule {
  integer?: boolean;
  min?: number | undefined;
  max?: number | undefined;
}

export const attribute = (field: string): string => field.replace(/_/g, ' ');

export const isBlank = (value: FieldValue): boolean =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

function toNumber(value: FieldValue): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/**
 * What an upload field takes, as the service's form requests state it: the media (judged by the
 * bytes, whatever the name says), the extensions its message lists, and the most kilobytes.
 */
export interface UploadRule {
  kinds: readonly FileMedia[];
  types: string;
  maxKb: number;
}

export const IMAGE_UPLOAD: UploadRule = { kinds: ['image'], types: 'jpg, jpeg, png, gif, bmp, webp', maxKb: 10 * 1024 };
export const VIDEO_UPLOAD: UploadRule = { kinds: ['video'], types: 'mp4, mpeg, mov, avi, wmv, ogg', maxKb: 50 * 1024 };
export const AUDIO_UPLOAD: UploadRule = { kinds: ['audio'], types: 'aac, mp3, ogg, webm', maxKb: 20 * 1024 };

/** An upload that passed: its bytes and their sha256. */
export type Upload = { bytes: Buffer; sha256: string };

/** One request's fields against the model it names (undefined when that check failed), and its errors. */
/** Laravel's `boolean` rule: true, false, 1, 0, "1", "0", never the string "true"; undefined for anything else. */
export function laravelBoolean(value: FieldValue): boolean | undefined {
  if (value === true || value === 1 || value === '1') return true;
  if (value === false || value === 0 || value === '0') return false;
  return undefined;
}

export class Check {
  readonly model: SimModel | undefined;
  readonly errors: Record<string, string[]> = {};

  constructor(
    readonly fields: Fields,
    models: ReadonlyMap<string, SimModel>,
    types: readonly string[],
  ) {
    const slug = this.string('model');
    const model = slug === undefined ? undefined : models.get(slug);
    this.model = model?.types.some((type) => types.includes(type)) ? model : undefined;
    if (slug !== undefined && !this.model) this.add('model', 'The selected model is invalid.');
  }

  add(field: string, message: string): undefined {
    (this.errors[field] ??= []).push(message);
    return undefined;
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  /** Laravel's summary: the first message, plus how many more there are. */
  message(): string {
    const all = Object.values(this.errors).flat();
    const first = all[0] ?? 'The given data was invalid.';
    const more = all.length - 1;
    return more > 0 ? `${first} (and ${more} more error${more === 1 ? '' : 's'})` : first;
  }

  string(field: string): string | undefined {
    const value = this.fields[field];
    if (isBlank(value)) return this.add(field, `The ${attribute(field)} field is required.`);
    if (typeof value !== 'string') return this.add(field, `The ${attribute(field)} field must be a string.`);
    return value;
  }

  /** Laravel's `boolean`; null when left out. */
  flag(field: string): boolean | null | undefined {
    const value = this.fields[field];
    if (value === undefined || value === null) return null;
    return laravelBoolean(value) ?? this.add(field, `The ${attribute(field)} field must be true or false.`);
  }

  /** Null when left out; undefined when given but not a string. */
  optional(field: string): string | null | undefined {
    return isBlank(this.fields[field]) ? null : this.string(field);
  }

  /** A required number (numeric strings accepted, as Laravel does for form fields) within bounds. */
  number(field: string, rule: NumberRule = {}): number | undefined {
    const raw = this.fields[field];
    const name = attribute(field);
    if (isBlank(raw)) return this.add(field, `The ${name} field is required.`);
    const value = toNumber(raw);
    const { integer, min, max } = rule;
    const must = (what: string): undefined => this.add(field, `The ${name} field must ${what}.`);
    if (value === undefined) return must(integer ? 'be an integer' : 'be a number');
    if (integer && !Number.isInteger(value)) return must('be an integer');
    if (min !== undefined && max !== undefined && min === max && value !== min) return must(`be ${min}`);
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      if (min !== undefined && max !== undefined) return must(`be between ${min} and ${max}`);
      return must(min !== undefined ? `be at least ${min}` : `not be greater than ${max}`);
    }
    return value;
  }

  /** The model's `min_<field>` and `max_<field>`. */
  range(field: string): NumberRule {
    return { min: this.model?.limits[`min_${field}`], max: this.model?.limits[`max_${field}`] };
  }

  /** An integer within the model's range. */
  bounded(field: string): number | undefined {
    return this.number(field, { integer: true, ...this.range(field) });
  }

  oneOf<T extends string | number>(field: string, value: T | undefined, allowed: readonly T[]): T | undefined {
    if (value === undefined) return undefined;
    return allowed.includes(value) ? value : this.add(field, `The selected ${attribute(field)} is invalid.`);
  }

  /** An uploaded image's sha256, once its type (by magic bytes) and size pass; null when left out. */
  async image(field: string, required: boolean): Promise<string | null | undefined> {
    const upload = await this.upload(field, required, IMAGE_UPLOAD);
    return upload && upload.sha256;
  }

  /** An uploaded file, once its type (by magic bytes) and size pass the rule; null when left out. */
  async upload(field: string, required: boolean, rule: UploadRule): Promise<Upload | null | undefined> {
    const value = this.fields[field];
    if (value === undefined || value === null || value === '') {
      return required ? this.add(field, `The ${attribute(field)} field is required.`) : null;
    }
    return this.file(field, value, rule);
  }

  /** Uploaded files sent as `<field>[]` parts, each checked as `<field>.<n>`; null when left out. */
  async uploads(field: string, rule: UploadRule): Promise<Upload[] | null | undefined> {
    const value = this.fields[field];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value)) return this.add(field, `The ${attribute(field)} field must be an array.`);
    const files = await Promise.all(value.map((item: FieldValue, n) => this.file(`${field}.${n}`, item, rule)));
    return files.every((file) => file !== undefined) ? files : undefined;
  }

  private async file(field: string, value: FieldValue, rule: UploadRule): Promise<Upload | undefined> {
    const name = attribute(field);
    if (!(value instanceof Blob)) return this.add(field, `The ${name} field must be a file.`);
    if (value.size > rule.maxKb * 1024) {
      return this.add(field, `The ${name} field must not be greater than ${rule.maxKb} kilobytes.`);
    }
    const bytes = Buffer.from(await value.arrayBuffer());
    const kinds = sniffMedia(bytes.subarray(0, SNIFF_BYTES))?.kinds ?? [];
    if (!rule.kinds.some((kind) => kinds.includes(kind))) {
      return this.add(field, `The ${name} field must be a file of type: ${rule.types}.`);
    }
    // Laravel's `dimensions` rule: each side of an image within what the models take.
    const sides = rule.kinds.includes('image') && kinds.includes('image') ? imageSides(bytes) : undefined;
    if (rule.kinds.includes('image') && kinds.includes('image') && !(sides && sidesAllowed(sides))) {
      return this.add(field, `The ${name} field has invalid image dimensions.`);
    }
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  /** The sides of an image that passed `image`. */
  async sides(field: string): Promise<ImageSides | undefined> {
    const value = this.fields[field];
    return value instanceof Blob ? imageSides(new Uint8Array(await value.arrayBuffer())) : undefined;
  }
}

/** Counts characters as PHP's mb_strlen does: code points, not UTF-16 units. */
export const charCount = (text: string): number => [...text].length;
