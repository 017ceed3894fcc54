/**
 * The rules every kind's request checks share, as the service's Laravel form requests apply them:
 * every problem collected into one 422 error bag. Each kind's own checks are in its file (kinds/).
 */
import { createHash } from 'node:crypto';
import type { SimModel } from './catalogue.js';
import { IMAGE_TYPES_TEXT, MAX_IMAGE_BYTES, sniffImageType } from './images.js';
import { attribute, ErrorBag, requiredNumber, requiredString, type Fields } from './rules.js';

export type Validated<T> = { ok: true; value: T } | { ok: false; bag: ErrorBag };

/** The request's `model`, which must serve `type`. */
export function lookupModel(bag: ErrorBag, fields: Fields, models: ReadonlyMap<string, SimModel>, type: string): SimModel | undefined {
  const slug = requiredString(bag, fields, 'model');
  if (slug === undefined) return undefined;
  const model = models.get(slug);
  if (!model || !model.types.includes(type)) return bag.add('model', 'The selected model is invalid.');
  return model;
}

/** An integer within the model's `min_<field>` and `max_<field>`. */
export function bounded(bag: ErrorBag, fields: Fields, model: SimModel | undefined, field: string): number | undefined {
  return requiredNumber(bag, fields, field, { integer: true, min: model?.limits[`min_${field}`], max: model?.limits[`max_${field}`] });
}

/** An uploaded image's sha256, after its type (by magic bytes) and size are checked. */
export async function imageDigest(bag: ErrorBag, fields: Fields, field: string, required: boolean): Promise<string | undefined> {
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

/** What a checked value gives (its price, its fingerprint), or the same error bag. */
export function mapValid<T, U>(result: Validated<T>, map: (value: T) => U): Validated<U> {
  return result.ok ? { ok: true, value: map(result.value) } : result;
}
