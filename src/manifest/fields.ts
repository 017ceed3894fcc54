import * as z from 'zod';
import { JOB_TYPES, kindOf, type FieldSpec, type JobType } from '../jobs/index.js';
import { inputFields } from '../jobs/inputs.js';

// A field's zod schema and the words a message uses for what it expects sit side by side, so a
// message can never describe a rule the schema does not enforce.

// The negative look-ahead keeps "." and ".." out: ids become file names under the output folder.
export const ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;
const ID_EXPECTED = 'an id of letters, digits, ".", "_" or "-", at most 128 characters, not "." or ".."';

const TAGS_EXPECTED = 'a list of tags, each non-empty text of at most 64 characters';

const FROM_TEXT = "Another job's result as this value: the id of the job in this manifest";

/** `{ from: <id> }` (strict: one key), or the `{ from: "img-{stem}" }` template a source entry fills per row. */
export const fromSchema = (id: z.ZodString = z.string().regex(ID_PATTERN)) =>
  z.strictObject({ from: id.describe(FROM_TEXT) });

/** `{ from }` on a source entry: an id template the entry fills per row. */
export const FROM_TEMPLATE = fromSchema(z.string().min(1));

/** A value that names another job's result: `{ from: <string> }`. */
export function fromOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { from } = value as { from?: unknown };
  return typeof from === 'string' ? from : undefined;
}

/**
 * A field's schema, taking `{ from }` too where the field takes another job's result (each item of a
 * list field): the field's own messages stay as they are, for a value that is neither.
 */
export function withInputs(type: JobType, name: string, schema: z.ZodType, from = fromSchema()): z.ZodType {
  if (!inputFields(type).includes(name)) return schema;
  const description = schema.description ?? '';
  if (!(schema instanceof z.ZodArray)) return z.xor([schema, from]).describe(description);
  return z.array(z.xor([schema.element as z.ZodType, from])).min(1).describe(description);
}

/** Fields of every job that are about the job, not sent: its id and its tags. */
export const COMMON_FIELDS = {
  id: { schema: z.string().regex(ID_PATTERN).describe(`Optional; derived from the content when absent. ${ID_EXPECTED}.`), expected: ID_EXPECTED },
  tags: {
    schema: z.array(z.string().min(1).max(64)).describe('Labels for grouping and selecting jobs (reports, --tag); never sent'),
    expected: TAGS_EXPECTED,
  },
} satisfies Record<string, FieldSpec>;

export const SPLIT_MODES = ['sentences', 'paragraphs'] as const;
export type SplitMode = (typeof SPLIT_MODES)[number];

/** `split:` on a job of a kind whose text may be cut into parts (jobs/<kind>.ts: `splittable`). */
export const SPLIT_FIELD: FieldSpec = {
  schema: z.enum(SPLIT_MODES).describe("Cut a text longer than the model's limit into parts at sentence (or paragraph) boundaries"),
  expected: 'one of "sentences", "paragraphs"',
};

/** Fields a job of that type may have that are not sent: COMMON_FIELDS, and `split` where the kind allows it. */
export function directivesOf(type: JobType): Readonly<Record<string, FieldSpec>> {
  return kindOf(type).splittable === undefined ? COMMON_FIELDS : { ...COMMON_FIELDS, split: SPLIT_FIELD };
}

/**
 * Every field a job of that type may have, `type` included, in the order messages list them; of
 * any kind when `type` is undefined (a source's `type` column decides per row).
 */
export function jobFieldNames(type?: JobType): string[] {
  if (type === undefined) return [...new Set(JOB_TYPES.flatMap((one) => jobFieldNames(one)))];
  const kind = kindOf(type);
  const [id, ...directives] = Object.keys(directivesOf(type));
  return [id ?? 'id', 'type', ...directives, ...Object.keys(kind.content), ...Object.keys(kind.params)];
}

export const TYPES_TEXT = JOB_TYPES.map((type) => `"${type}"`).join(', ');
export const TYPE_FIELD: FieldSpec = {
  schema: z.enum(JOB_TYPES).describe('What to generate'),
  expected: `one of ${TYPES_TEXT}`,
};

export const TOP_LEVEL_EXPECTED: Record<string, string> = {
  version: '1',
  budget: 'a number of USD, 0 or more',
  defaults: `a mapping with ${listed(JOB_TYPES)}`,
  jobs: 'a list of jobs',
  sources: 'a list of sources (csv, tsv, jsonl, files or matrix entries)',
};

/** `a, b and/or c`. */
export function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and/or ${names.at(-1)}`;
}

/** The spec of a field of a job or of defaults (`type` included), whichever table holds it. */
export function fieldSpecFor(type: JobType | undefined, field: string): FieldSpec | undefined {
  if (field === 'type') return TYPE_FIELD;
  if (field === 'id' || field === 'tags') return COMMON_FIELDS[field];
  if (type === undefined) return undefined;
  // Own keys only: a field named `constructor` or `toString` must not find Object's.
  const { params, content } = kindOf(type);
  const table = [params, content, directivesOf(type)].find((fields) => Object.hasOwn(fields, field));
  return table?.[field];
}

/** The kinds that have `field`, for a hint when a field is given to a kind without it. */
export function kindsWithField(field: string): JobType[] {
  return JOB_TYPES.filter((type) => fieldSpecFor(type, field) !== undefined);
}
