import * as z from 'zod';
import { JOB_KINDS, JOB_TYPES, type FieldSpec, type JobKind, type JobType } from '../jobs/index.js';
import { directivesOf, fieldSpecFor, FROM_TEMPLATE, jobFieldNames, TYPE_FIELD, withInputs } from './fields.js';
import { MAX_TEXT_BYTES, sizeText } from './files.js';
import { TABLE_KINDS, type TableKind } from './sources/types.js';

/** Where the committed schema lives; editors find it through the `$schema` comment of a manifest. */
export const SCHEMA_FILE = 'manifests/mediabatch.schema.json';

type Shape = Record<string, z.ZodType>;
type Json = Record<string, unknown>;

/** Fields whose text is sent to the service as it is written. */
const SENT_TEXT_FIELDS: readonly string[] = ['text', 'prompt', 'negative_prompt'];

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a text cannot be sent, as the params of a zod issue: schema-issues.ts words them. */
export interface Unsendable {
  expected: string;
  detail: string;
  hint: string;
}

// 1-based and in code points, as an editor's status bar counts them.
function characterNumber(text: string, index: number): number {
  return [...text.slice(0, index)].length + 1;
}

/**
 * Why a text cannot be sent, or undefined when it can. Inline text is capped like a text file:
 * the same mistake (the wrong thing pasted) costs the same. A NUL is what a `"\0"` escape (or a
 * stray byte) writes, and no service wants it in a prompt; an unpaired surrogate (a lone
 * `"\ud800"` escape) has no UTF-8 encoding at all, so the request body would carry U+FFFD instead.
 */
function unsendable(field: string, text: string): Unsendable | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_TEXT_BYTES) {
    const hint = field === 'text' ? 'split it into several jobs' : 'shorten it';
    return { expected: 'a text of at most 1 MB', detail: sizeText(bytes, MAX_TEXT_BYTES), hint };
  }
  const nul = text.indexOf('\u0000');
  if (nul !== -1) {
    const detail = `a NUL character at character ${characterNumber(text, nul)}`;
    const hint = 'remove it (in quotes, "\\0" and "\\x00" write one)';
    return { expected: 'text without NUL characters', detail, hint };
  }
  const lone = LONE_SURROGATE.exec(text);
  if (lone === null) return undefined;
  const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
  const detail = `an unpaired surrogate U+${code} at character ${characterNumber(text, lone.index)}`;
  const hint = 'a "\\uD800"-style escape needs its other half; write the character itself';
  return { expected: 'text that can be encoded as UTF-8', detail, hint };
}

function fieldSchema(name: string, spec: FieldSpec, type?: JobType): z.ZodType {
  const sent = SENT_TEXT_FIELDS.includes(name) ? sendable(name, spec.schema) : spec.schema;
  return type === undefined ? sent : withInputs(type, name, sent);
}

function sendable(name: string, schema: z.ZodType): z.ZodType {
  return schema.superRefine((value, ctx) => {
    const problem = typeof value === 'string' ? unsendable(name, value) : undefined;
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem.expected, params: problem });
  });
}

// Everything is optional at this level: a job may take any parameter from defaults, so "required"
// can only be decided after merging, which read.ts does with messages of its own.
function optionalShape(specs: Readonly<Record<string, FieldSpec>>, type?: JobType): Shape {
  const shape = Object.entries(specs).map(([name, spec]) => [name, fieldSchema(name, spec, type).optional()]);
  return Object.fromEntries(shape);
}

function jobSchema(kind: JobKind) {
  return z
    .strictObject({
      ...optionalShape(directivesOf(kind.type)),
      type: z.literal(kind.type).describe('What to generate'),
      ...optionalShape(kind.content, kind.type),
      ...optionalShape(kind.params, kind.type),
    })
    .describe(kind.title);
}

function defaultsSchema(): z.ZodType {
  const blocks = JOB_KINDS.map((kind) => {
    const block = z.strictObject(optionalShape(kind.params)).describe(`Merged under every ${kind.type} job`);
    return [kind.type, block.optional()];
  });
  return z.strictObject(Object.fromEntries(blocks)).optional();
}

/** One job, whatever its kind (`type` picks which): what each inline job and each source's row is checked against. */
export function jobItemSchema() {
  const jobs = JOB_KINDS.map(jobSchema) as [ReturnType<typeof jobSchema>, ...ReturnType<typeof jobSchema>[]];
  return z.discriminatedUnion('type', jobs);
}

const SOURCES_TEXT = 'Jobs from spreadsheets, JSON Lines files, folders and matrices, after the inline jobs';

/** The manifest's top level, its jobs and source entries each as `job` and `source` say. Unknown keys fail. */
function topLevelSchema(job: z.ZodType, source: z.ZodType) {
  return z.strictObject({
    version: z.literal(1).describe('Manifest format version; always 1'),
    budget: z.number().min(0).optional().describe('Cap on total spend in USD; --budget overrides'),
    defaults: defaultsSchema(),
    jobs: z.array(job).optional().describe('The jobs, in order'),
    sources: z.array(source).optional().describe(SOURCES_TEXT),
  });
}

/**
 * The manifest around its jobs: what is checked when it is opened. Each job is then checked on
 * its own as it is read (jobItemSchema), so a manifest's jobs are never all held as zod output;
 * each source entry too (manifest/sources/entry.ts), with messages of its own.
 */
export function headerSchema() {
  return topLevelSchema(z.unknown(), z.unknown()).refine(
    (root) => (root.jobs?.length ?? 0) + (root.sources?.length ?? 0) > 0,
    { path: ['jobs'], message: 'no jobs' },
  );
}

function optionalJobFields(): Shape {
  const shape: Shape = {};
  for (const name of jobFieldNames()) {
    if (name === 'id' || name === 'type') continue;
    // One schema per distinct rule: `prompt` is the same text for three kinds, so it is listed once.
    const distinct = new Map<string, z.ZodType>();
    for (const type of JOB_TYPES) {
      const spec = fieldSpecFor(type, name);
      // On an entry, `{ from }` is an id template the entry fills per row.
      const schema = spec === undefined ? undefined : withInputs(type, name, spec.schema, FROM_TEMPLATE);
      if (schema !== undefined) distinct.set(JSON.stringify(z.toJSONSchema(schema)), schema);
    }
    const schemas = [...distinct.values()];
    const schema = schemas.length === 1 ? schemas[0] : z.union(schemas as [z.ZodType, z.ZodType, ...z.ZodType[]]);
    if (schema !== undefined) shape[name] = schema.optional();
  }
  return shape;
}

const ID_TEMPLATE = z
  .string()
  .min(1)
  .describe('Id template: text with placeholders such as {stem}, {n}, {field}, {field.index}, {field.stem}');

const FILE_WORDS: Record<TableKind, string> = {
  csv: 'A CSV file (header row first), relative to the manifest',
  tsv: 'A tab-separated file (header row first), relative to the manifest',
  jsonl: 'A JSON Lines file (one job object a line), relative to the manifest',
};

/**
 * The zod schema of one `sources:` entry, for the manifest's schema and so its JSON Schema
 * (editor completion). Strict: a key that is neither the entry's own nor a job field fails. A
 * job field's value is checked here as any kind takes it; `parseSourceEntry` checks it for the
 * entry's kind and words every problem the way the manifest's messages do.
 */
export function sourceEntrySchema() {
  const fields = optionalJobFields();
  const type = TYPE_FIELD.schema;
  const table = (kind: TableKind) =>
    z
      .strictObject({
        [kind]: z.string().min(1).describe(FILE_WORDS[kind]),
        type: type.optional(),
        columns: z.record(z.string(), z.string().min(1)).optional().describe('field: column (or key); unmapped columns named like a field map to it'),
        id: ID_TEMPLATE.optional(),
        ...fields,
      })
      .describe(`Jobs from the rows of a ${kind.toUpperCase()} file`);
  const files = z
    .strictObject({
      files: z.string().min(1).describe("A pattern relative to the manifest's folder, e.g. chapters/*.txt"),
      type,
      field: z.string().min(1).describe('The field each file fills, e.g. text_file or first_frame_image'),
      id: ID_TEMPLATE.optional().describe('Id template; default {stem}'),
      ...fields,
    })
    .describe('One job per matching file, sorted by path');
  const matrix = z
    .strictObject({
      matrix: z.record(z.string(), z.array(z.unknown()).min(1)).describe('field: [values…]; every combination, the first list outermost'),
      type: type.optional(),
      id: ID_TEMPLATE.optional(),
      ...fields,
    })
    .describe('One job per combination of the lists');
  const [csv, tsv, jsonl] = TABLE_KINDS.map(table);
  return z.union([csv as z.ZodType, tsv as z.ZodType, jsonl as z.ZodType, files, matrix]).describe('A source of jobs');
}

/** The whole manifest. Unknown keys are errors at every level, so typos fail loudly. */
function manifestSchema() {
  return topLevelSchema(jobItemSchema(), sourceEntrySchema()).describe('A mediabatch manifest: jobs, sources, or both');
}

/**
 * JSON Schema of the manifest, for editor completion; equal to the committed SCHEMA_FILE. Its jobs
 * are made as strict as the validator (withStrictJobs): the zod schema above stays loose about
 * what defaults may supply, because read.ts reports that with messages of its own.
 */
export function manifestJsonSchema(): Json {
  const generated = z.toJSONSchema(manifestSchema(), { target: 'draft-7' }) as Json;
  return { ...withStrictJobs(generated), title: 'mediabatch manifest' };
}

/**
 * The jobs of the manifest's JSON Schema made as strict as the validator (read.ts), with one
 * error for one mistake, so an editor says what `mediabatch validate` would:
 * - a job is matched to its kind by `if`/`then` on `type`, not by trying every kind (`oneOf`),
 *   which reported a wrong field once per kind;
 * - each kind's `then` allows only that kind's fields and requires what only a job can give:
 *   `text` or `text_file` (exactly one, `oneOf`) for speech, the prompt, the first frame image;
 * - a field `defaults.<type>` may supply (model, voice, size …) is required on a job exactly when
 *   the manifest's defaults for that type do not give it: a condition on the whole document,
 *   at its root, since a job alone cannot see the defaults.
 * What a schema cannot know stays the validator's: files on disk, unique ids, the catalogue.
 * `generated` is zod's JSON Schema of the manifest, whose jobs are a union of kinds.
 */
function withStrictJobs(generated: Json): Json {
  const properties = generated['properties'] as Json;
  const jobs = properties['jobs'] as Json;
  const items = jobs['items'] as { oneOf?: Json[]; anyOf?: Json[] };
  const branches = new Map((items.oneOf ?? items.anyOf ?? []).map((branch) => [typeOf(branch), branch]));
  const requiredByDefaults = [...JOB_KINDS.flatMap(requiredUnlessDefaulted), ...JOB_KINDS.flatMap(requiredWhenOnJob)];
  return {
    ...generated,
    properties: { ...properties, jobs: { ...jobs, items: jobItems(branches) } },
    allOf: [SOME_JOBS, ...requiredByDefaults],
  };
}

// At least one job: without sources, `jobs` must list one (the header's refine, which zod does
// not put in a JSON Schema). An `if`, so an editor reports the one mistake, not three.
const SOME_JOBS = { if: { not: { required: ['sources'] } }, then: { required: ['jobs'], properties: { jobs: { minItems: 1 } } } };

function typeOf(branch: Json): unknown {
  return ((branch['properties'] as Json)['type'] as Json)['const'];
}

/**
 * Matches a job of one kind. Anything else (no `type`, an unknown one, not a mapping at all) is
 * reported for that alone: `required` and `properties` pass a value that is not an object, so
 * without `type: object` every kind's rules would apply to it at once.
 */
function isKind(kind: JobKind): Json {
  return { type: 'object', required: ['type'], properties: { type: { const: kind.type } } };
}

function jobItems(branches: Map<unknown, Json>): Json {
  return {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: [...JOB_TYPES], description: 'What to generate' } },
    allOf: JOB_KINDS.map((kind) => ({ if: isKind(kind), then: kindSchema(kind, branches.get(kind.type)) })),
  };
}

/** One kind's fields (only these), with what only the job itself can give required. */
function kindSchema(kind: JobKind, branch: Json | undefined): Json {
  // Every kind is a branch of zod's union; one missing would be a bug in schema.ts.
  if (branch === undefined) throw new Error(`the manifest schema has no branch for ${kind.type}`);
  const ownRequired = kind.required.filter((field) => field in kind.content);
  const pair = kind.exactlyOne;
  return {
    ...branch,
    required: [...((branch['required'] as string[] | undefined) ?? []), ...ownRequired],
    ...(pair === undefined ? {} : { oneOf: pair.map((field) => ({ required: [field] })) }),
  };
}

/** For each field a kind requires that defaults may give: required on its jobs unless defaults give it. */
function requiredUnlessDefaulted(kind: JobKind): Json[] {
  return kind.required
    .filter((field) => field in kind.params)
    .map((field) => ({
      if: { not: { required: ['defaults'], properties: { defaults: { required: [kind.type], properties: { [kind.type]: { required: [field] } } } } } },
      then: { properties: { jobs: { items: { if: isKind(kind), then: { required: [field] } } } } },
    }));
}

const defaultsGive = (kind: JobKind, field: string): Json => ({
  required: ['defaults'],
  properties: { defaults: { required: [kind.type], properties: { [kind.type]: { required: [field] } } } },
});

/**
 * A field required only when another has certain values (speech's voice, unless the voice is
 * cloned or designed): required on a job whose own values call for it, when defaults give neither
 * field (what defaults give, the validator judges).
 */
function requiredWhenOnJob(kind: JobKind): Json[] {
  return Object.entries(kind.params).flatMap(([field, { requiredWhen }]) => {
    if (requiredWhen === undefined) return [];
    const on = requiredWhen.field;
    const values = requiredWhen.in.filter((value) => value !== undefined);
    const calls = [
      ...(values.length > 0 ? [{ required: [on], properties: { [on]: { enum: values } } }] : []),
      ...(requiredWhen.in.includes(undefined) ? [{ not: { required: [requiredWhen.field] } }] : []),
    ];
    const onJob = { if: { allOf: [isKind(kind), { anyOf: calls }] }, then: { required: [field] } };
    const given = { anyOf: [defaultsGive(kind, field), defaultsGive(kind, requiredWhen.field)] };
    return [{ if: { not: given }, then: { properties: { jobs: { items: onJob } } } }];
  });
}
