import * as z from 'zod';
import { JOB_KINDS, type FieldSpec, type JobKind } from '../jobs/index.js';
import { directivesOf } from './fields.js';
import { withStrictJobs } from './json-schema.js';
import { sourceEntrySchema } from './sources/entry-schema.js';

/** Where the committed schema lives; editors find it through the `$schema` comment of a manifest. */
export const SCHEMA_FILE = 'manifests/mediabatch.schema.json';

type Shape = Record<string, z.ZodType>;

// Everything is optional at this level: a job may take any parameter from defaults, so "required"
// can only be decided after merging, which load.ts does with messages of its own.
function optionalShape(specs: Readonly<Record<string, FieldSpec>>): Shape {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.schema.optional()]));
}

function jobSchema(kind: JobKind) {
  return z
    .strictObject({
      ...optionalShape(directivesOf(kind.type)),
      type: z.literal(kind.type).describe('What to generate'),
      ...optionalShape(kind.content),
      ...optionalShape(kind.params),
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

/**
 * The manifest around its jobs: what is checked when it is opened. Each job is then checked on
 * its own as it is read (jobItemSchema), so a manifest's jobs are never all held as zod output.
 */
export function headerSchema() {
  return z
    .strictObject({
      version: z.literal(1),
      budget: z.number().min(0).optional(),
      defaults: defaultsSchema(),
      jobs: z.array(z.unknown()).optional(),
      // Each entry is checked on its own (manifest/sources/entry.ts), with messages of its own.
      sources: z.array(z.unknown()).optional(),
    })
    .refine((root) => (root.jobs?.length ?? 0) + (root.sources?.length ?? 0) > 0, { path: ['jobs'], message: 'no jobs' });
}

/** The whole manifest. Unknown keys are errors at every level, so typos fail loudly. */
function manifestSchema() {
  return z
    .strictObject({
      version: z.literal(1).describe('Manifest format version; always 1'),
      budget: z.number().min(0).optional().describe('Cap on total spend in USD; --budget overrides'),
      defaults: defaultsSchema(),
      jobs: z.array(jobItemSchema()).optional().describe('The jobs, in order'),
      sources: z.array(sourceEntrySchema()).optional().describe('Jobs from spreadsheets, JSON Lines files, folders and matrices, after the inline jobs'),
    })
    .describe('A mediabatch manifest: jobs, sources, or both');
}

/**
 * JSON Schema of the manifest, for editor completion; equal to the committed SCHEMA_FILE. Its jobs
 * are made as strict as the validator (json-schema.ts): the zod schema above stays loose about
 * what defaults may supply, because load.ts reports that with messages of its own.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestSchema(), { target: 'draft-7' }) as Record<string, unknown>;
  // At least one job: without sources, `jobs` must list one (the header's refine, which zod does
  // not put in a JSON Schema). An `if`, so an editor reports the one mistake, not three.
  const someJobs = { if: { not: { required: ['sources'] } }, then: { required: ['jobs'], properties: { jobs: { minItems: 1 } } } };
  const strict = withStrictJobs(schema);
  return { ...strict, allOf: [someJobs, ...((strict['allOf'] as unknown[] | undefined) ?? [])], title: 'mediabatch manifest' };
}
