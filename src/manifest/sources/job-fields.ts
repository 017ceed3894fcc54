import * as z from 'zod';
import { JOB_TYPES, type FieldSpec, type JobType } from '../../jobs/index.js';
import { fieldSpecFor, jobFieldNames as fieldNamesOf, TYPES_TEXT } from '../fields.js';

/**
 * The fields a row of a source may fill, by kind: `type`, and every field a job of that kind
 * may have (manifest/fields.ts: `id`, `tags`, `split` where the kind splits, its content and
 * parameters).
 */
export const TYPE_FIELD: FieldSpec = { schema: z.enum(JOB_TYPES).describe('What to generate'), expected: `one of ${TYPES_TEXT}` };

/** The spec of `field` for a job of `type`, or undefined when that kind has no such field. */
export function jobFieldSpec(type: JobType, field: string): FieldSpec | undefined {
  return field === 'type' ? TYPE_FIELD : fieldSpecFor(type, field);
}

/** Every field a job of `type` may have; of any kind when `type` is undefined (a `type` column decides per row). */
export function jobFieldNames(type?: JobType): string[] {
  return [...new Set((type === undefined ? JOB_TYPES : [type]).flatMap((one) => fieldNamesOf(one)))];
}

/** The kinds that have `field`, for a hint when a field is given to a kind without it. */
export function kindsWithField(field: string): JobType[] {
  return JOB_TYPES.filter((type) => jobFieldSpec(type, field) !== undefined);
}
