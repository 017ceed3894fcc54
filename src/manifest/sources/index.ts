/**
 * Sources of jobs besides inline `jobs:` (docs/sources.md): CSV/TSV/JSON Lines files, file
 * globs and matrices. `parseSourceEntry` checks an entry once; `readSource` then streams its rows,
 * each the raw fields of one job (the entry's job fields under the row's own) with where they
 * came from, or a located problem. Defaults, validation and ids from content are the caller's,
 * exactly as for inline jobs.
 */
import { readCsv } from './csv.js';
import type { SourceEntry } from './entry-types.js';
import { readFiles } from './files.js';
import { readJsonl } from './jsonl.js';
import { readMatrix } from './matrix.js';
import type { SourceContext, SourceItem } from './types.js';

/**
 * The rows of one checked entry in the source's order, in batches as the source has them ready
 * (a chunk of a file, a thousand files or combinations): what a caller writing to the ledger in
 * batches wants, and a promise per batch rather than per row.
 */
export function readSourceBatches(entry: SourceEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  switch (entry.kind) {
    case 'csv':
    case 'tsv':
      return readCsv(entry, context);
    case 'jsonl':
      return readJsonl(entry, context);
    case 'files':
      return readFiles(entry, context);
    case 'matrix':
      return readMatrix(entry, context);
  }
}

/** The rows of one checked entry, one at a time, in the source's order. */
export async function* readSource(entry: SourceEntry, context: SourceContext): AsyncGenerator<SourceItem> {
  for await (const batch of readSourceBatches(entry, context)) yield* batch;
}

export { cellShape, coerceCell, type CellShape } from './coerce.js';
export { MAX_MATRIX_COMBINATIONS, parseSourceEntry, type EntryContext } from './entry.js';
export { sourceEntrySchema } from './entry-schema.js';
export { SOURCE_KINDS, TABLE_KINDS, type FilesEntry, type MatrixEntry, type SourceEntry, type SourceKind, type TableEntry, type TableKind } from './entry-types.js';
export { jobFieldNames, jobFieldSpec } from './job-fields.js';
export { sourceDisplayPath } from './rows.js';
export { idSafe, parseIdTemplate, renderId, stemOf, type IdTemplate } from './template.js';
export type { LocateInEntry, SourceContext, SourceItem, SourceLocation, SourceProblem, SourceRow } from './types.js';
