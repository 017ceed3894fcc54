import type { JobType } from '../jobs/types.js';
import * as z from 'zod';
import { COMMON_FIELDS, CONTENT_BY_TYPE, type FieldSpec, JOB_TYPES, PARAMS_BY_TYPE } from './fields.js';

/** Where the committed schema lives; editors find it through the `$schema` comment of a manifest. */
export const SCHEMA_FILE = 'manifests/mediabatch.schema.json';

type Shape = Record<string, z.ZodType>;

// Everything is optional at this level: a job may take any parameter from defaults, so "required"
// can only be decided after merging, which load.ts does with messages of its own.
function optionalShape(specs: Record<string, FieldSpec>): Shape {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.schema.optional()]));
}

function jobSchema(type: JobType) {
  return z
    .strictObject({
      ...optionalShape(COMMON_FIELDS),
      type: z.literal(type).describe('What to generate'),
      ...optionalShape(CONTENT_BY_TYPE[type]),
      ...optionalShape(PARAMS_BY_TYPE[type]),
    })
    .describe(type === 'txt2audio' ? 'Text to speech: give text or text_file' : 'Image to video');
}

export function defaultsSchema(type: JobType) {
  return z.strictObject(optionalShape(PARAMS_BY_TYPE[type])).describe(`Merged under every ${type} job`);
}

/** The whole manifest. Unknown keys are errors at every level, so typos fail loudly. */
export function manifestSchema() {
  const [audio, video] = JOB_TYPES.map(jobSchema) as [ReturnType<typeof jobSchema>, ReturnType<typeof jobSchema>];
  return z
    .strictObject({
      version: z.literal(1).describe('Manifest format version; always 1'),
      budget: z.number().min(0).optional().describe('Cap on total spend in USD; --budget overrides'),
      defaults: z
        .strictObject({ txt2audio: defaultsSchema('txt2audio').optional(), img2video: defaultsSchema('img2video').optional() })
        .optional(),
      jobs: z.array(z.discriminatedUnion('type', [audio, video])).min(1).describe('The jobs, in order'),
    })
    .describe('A mediabatch manifest');
}

/** JSON Schema of the manifest, for editor completion; equal to the committed SCHEMA_FILE. */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestSchema(), { target: 'draft-7' }) as Record<string, unknown>;
  return { ...schema, title: 'mediabatch manifest' };
}
