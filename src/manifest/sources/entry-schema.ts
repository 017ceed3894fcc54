import * as z from 'zod';
import { JOB_TYPES } from '../../jobs/index.js';
import { TABLE_KINDS, type TableKind } from './types.js';
import { jobFieldNames, fieldSpecFor, TYPE_FIELD } from '../fields.js';

/**
 * The zod schema of one `sources:` entry, for the manifest's schema and so its JSON Schema
 * (editor completion). Strict: a key that is neither the entry's own nor a job field fails. A
 * job field's value is checked here as any kind takes it; `parseSourceEntry` checks it for the
 * entry's kind and words every problem the way the manifest's messages do.
 */

function optionalJobFields(): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const name of jobFieldNames()) {
    if (name === 'id' || name === 'type') continue;
    // One schema per distinct rule: `prompt` is the same text for three kinds, so it is listed once.
    const distinct = new Map<string, z.ZodType>();
    for (const type of JOB_TYPES) {
      const spec = fieldSpecFor(type, name);
      if (spec !== undefined) distinct.set(JSON.stringify(z.toJSONSchema(spec.schema)), spec.schema);
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
