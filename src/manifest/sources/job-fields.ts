import * as z from 'zod';
import { JOB_KINDS, JOB_TYPES, kindOf, type FieldSpec, type JobType } from '../../jobs/index.js';
import { COMMON_FIELDS, TYPES_TEXT } from '../fields.js';
import { SPLIT_FIELD } from '../split.js';

/**
 * The fields a row of a source may fill, by kind: the kind's own (jobs/<type>.ts), `id`, `type`,
 * and two every job may carry that the kinds do not list yet: `tags` (any kind) and `split`
 * (kinds that speak a text). When those two join the manifest's common fields, this table takes
 * them from there; until then it is the one place that knows them.
 */
export const TYPE_FIELD: FieldSpec = { schema: z.enum(JOB_TYPES).describe('What to generate'), expected: `one of ${TYPES_TEXT}` };

export const TAGS_FIELD: FieldSpec = {
  schema: z.array(z.string().min(1)).describe('Tags for grouping in reports and selecting with --tag'),
  expected: 'a list of tags (non-empty text)',
};

/** The spec of `field` for a job of `type`, or undefined when that kind has no such field. */
export function jobFieldSpec(type: JobType, field: string): FieldSpec | undefined {
  if (field === 'type') return TYPE_FIELD;
  if (field === 'id') return COMMON_FIELDS.id;
  if (field === 'tags') return TAGS_FIELD;
  const kind = kindOf(type);
  if (field === 'split') return kind.textFrom === undefined ? undefined : SPLIT_FIELD;
  return kind.content[field] ?? kind.params[field];
}

/** Every field a job of `type` may have; of any kind when `type` is undefined (a `type` column decides per row). */
export function jobFieldNames(type?: JobType): string[] {
  const kinds = type === undefined ? JOB_KINDS : [kindOf(type)];
  const names = new Set(['id', 'type', 'tags']);
  for (const kind of kinds) {
    for (const name of [...Object.keys(kind.content), ...Object.keys(kind.params)]) names.add(name);
    if (kind.textFrom !== undefined) names.add('split');
  }
  return [...names];
}

/** The kinds that have `field`, for a hint when a field is given to a kind without it. */
export function kindsWithField(field: string): JobType[] {
  return JOB_TYPES.filter((type) => jobFieldSpec(type, field) !== undefined);
}
