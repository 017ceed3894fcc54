import type { Model } from '../api/types.js';
import type { ResolvedJob } from './job.js';
import type { ReportProblem } from './kind.js';
import { VIDEO_BOUNDS } from './fields.js';

/** A model's numeric limit from `info.limits`, if it states one. */
export function limitOf(model: Model, key: string): number | undefined {
  const value = model.limits[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `between 30 and 120`, `exactly 1`, `at least 49`, or undefined when the model sets no bound. */
export function boundsText(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}` : `between ${min} and ${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max === undefined ? undefined : `at most ${max}`;
}

export function outside(value: number, min: number | undefined, max: number | undefined): boolean {
  return (min !== undefined && value < min) || (max !== undefined && value > max);
}

/** Each of `fields` within the model's `min_<field>`/`max_<field>` limits. */
export function checkBounds(params: Readonly<Record<string, unknown>>, model: Model, fields: readonly string[], report: ReportProblem): void {
  for (const field of fields) {
    const value = params[field];
    if (typeof value !== 'number') continue;
    const [min, max] = [limitOf(model, `min_${field}`), limitOf(model, `max_${field}`)];
    const bounds = boundsText(min, max);
    if (bounds !== undefined && outside(value, min, max)) {
      const expected = min !== undefined && min === max ? bounds : `a whole number ${bounds}`;
      report(field, `${expected} for ${model.slug}`, { value });
    }
  }
}

/**
 * A video made from frames (image to video, audio to video): its numbers within the model's
 * bounds, and a last frame only for a model that supports one (`supports_last_frame`).
 */
export function checkFramedVideo(job: ResolvedJob, found: Model, models: readonly Model[], report: ReportProblem): void {
  checkBounds(job.params, found, VIDEO_BOUNDS, report);
  // A frame another job makes (`inputs`) counts as one given.
  const taken = job.inputs?.['last_frame_image'];
  const last = job.media['last_frame_image']?.written ?? (taken === undefined ? undefined : { from: taken });
  if (last === undefined || found.features['supports_last_frame'] === true) return;
  const able = models.filter((other) => other.features['supports_last_frame'] === true).map((other) => other.slug);
  const hint = able.length > 0 ? `remove it, or use a model that supports it: ${able.join(', ')}` : 'remove it';
  report('last_frame_image', `no last frame for ${found.slug} (it does not support one)`, { value: last }, hint);
}

/** LoRAs the model offers, each by name; a model that offers none takes none. */
export function checkLoras(params: Readonly<Record<string, unknown>>, found: Model, models: readonly Model[], report: ReportProblem): void {
  const given = params['loras'];
  if (!Array.isArray(given) || given.length === 0) return;
  if (found.loras.length === 0) {
    const able = models.filter((other) => other.loras.length > 0).map((other) => other.slug);
    const hint = able.length > 0 ? `remove them, or use a model that offers LoRAs: ${able.join(', ')}` : 'remove them';
    report('loras', `no LoRAs for ${found.slug} (it offers none)`, { value: given.map((lora: { name?: unknown }) => lora.name) }, hint);
    return;
  }
  for (const lora of given as { name: string }[]) {
    if (!found.loras.includes(lora.name)) report('loras', `a LoRA of ${found.slug}`, { value: lora.name }, `LoRAs of ${found.slug}: ${found.loras.join(', ')}`);
  }
}
