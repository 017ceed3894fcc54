import type { Model } from '../api/types.js';
import { kindOf, type JobType, type MediaFact, type MediaField } from '../jobs/index.js';
import { limitOf } from '../jobs/model-checks.js';
import { modelOf } from './catalogue.js';

/** The largest side an image field takes (fields.ts `image`): a price by sides before the image exists. */
export const MAX_SIDE_PX = 5000;

/** A field taken from a result that prices the job but has no bound to quote it at. */
export interface Unbounded {
  field: string;
  expected: string;
  got: string;
  hint: string;
}

export interface PriceBound {
  facts: Record<string, number>;
  textChars?: number | undefined;
  bound: boolean;
  unbounded: Unbounded[];
}

/**
 * What a job whose inputs are other jobs' results is priced at before they exist: the facts of a
 * media input its kind prices by (sides, length) at their bound, a per-length text at the model's
 * `max_text`. `bound`: some price depends on an input. Without the catalogue (offline) a length's
 * bound is unknown and left out: nothing is priced then.
 */
export function priceBound(
  type: JobType,
  params: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, string>>,
  models: readonly Model[] | undefined,
): PriceBound {
  const kind = kindOf(type);
  const model = models === undefined ? undefined : modelOf({ params }, models);
  const out: PriceBound = { facts: {}, textChars: undefined, bound: false, unbounded: [] };
  for (const [key, fromId] of Object.entries(inputs)) {
    const field = key.replace(/\.\d+$/, '');
    const spec = kind.files[field];
    const got = `the result of ${JSON.stringify(fromId)}`;
    if (typeof spec === 'object') {
      for (const [param, fact] of Object.entries(spec.facts ?? {})) {
        out.bound = true;
        const value = factBound(spec, fact, model);
        if (value !== undefined) out.facts[param] = value;
        else if (model !== undefined && !out.unbounded.some((problem) => problem.field === field)) {
          const expected = `a file of its own (${type} is priced by its length, and ${model.slug} states no longest)`;
          const hint = 'give the file itself, or a model that states its longest duration';
          out.unbounded.push({ field, expected, got, hint });
        }
      }
    } else if (kind.pricing.by === 'per-length' && field === kind.splittable?.field) {
      out.bound = true;
      out.textChars = model === undefined ? undefined : kind.splittable.maxChars(model);
      if (model !== undefined && out.textChars === undefined) {
        const expected = `a text of its own (${type} is priced by its length, and ${model.slug} states no max_text)`;
        out.unbounded.push({ field, expected, got, hint: 'give the text itself, or a model that states max_text' });
      }
    }
  }
  return out;
}

function factBound(spec: MediaField, fact: MediaFact, model: Model | undefined): number | undefined {
  if (fact === 'width' || fact === 'height') return MAX_SIDE_PX;
  const limit = (key: string) => (model === undefined ? undefined : limitOf(model, key));
  const stated = limit('max_duration') ?? limit('max_video_duration_seconds');
  const longest = spec.durationSec?.max ?? stated;
  return longest === undefined || fact === 'durationSec' ? longest : Math.ceil(longest);
}
