import { readCsv } from './csv.js';
import { readFiles } from './files.js';
import { readJsonl } from './jsonl.js';
import { readMatrix } from './matrix.js';
import type { SourceContext, SourceEntry, SourceItem } from './types.js';

/**
 * Sources of jobs besides inline `jobs:` (docs/sources.md). The rows of one entry checked by
 * `parseSourceEntry`, in the source's order, in batches as the source has them ready (a chunk of a
 * file, a thousand files or combinations): a promise per batch rather than per row. Each row is
 * the raw fields of one job with where they came from, or a located problem; defaults,
 * validation and ids from content are the caller's, exactly as for inline jobs.
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

export { parseSourceEntry } from './entry.js';
export type * from './types.js';
