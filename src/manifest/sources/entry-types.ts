import type { JobType } from '../../jobs/index.js';
import type { IdTemplate } from './template.js';

/** The kinds of source, by the key that names them on an entry. */
export const TABLE_KINDS = ['csv', 'tsv', 'jsonl'] as const;
export const SOURCE_KINDS = [...TABLE_KINDS, 'files', 'matrix'] as const;
export type TableKind = (typeof TABLE_KINDS)[number];
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** The keys an entry of each kind has besides job fields. */
export const OWN_KEYS: Readonly<Record<SourceKind, readonly string[]>> = {
  csv: ['csv', 'type', 'columns', 'id'],
  tsv: ['tsv', 'type', 'columns', 'id'],
  jsonl: ['jsonl', 'type', 'columns', 'id'],
  files: ['files', 'type', 'field', 'id'],
  matrix: ['matrix', 'type', 'id'],
};

interface EntryBase {
  /** The entry's `type`, when it gives one (a table may take it from a column instead). */
  type?: JobType | undefined;
  idTemplate?: IdTemplate | undefined;
  /** Job fields written on the entry: they apply to every row (a row's own value wins). */
  fields: Record<string, unknown>;
}

export interface TableEntry extends EntryBase {
  kind: TableKind;
  /** The file as written, relative to the manifest's folder. */
  file: string;
  /** field → column (CSV/TSV) or key (JSONL). */
  columns: Record<string, string>;
}

export interface FilesEntry extends EntryBase {
  kind: 'files';
  type: JobType;
  glob: string;
  /** The field each matching file fills (`text_file`, `first_frame_image` …). */
  field: string;
}

export interface MatrixEntry extends EntryBase {
  kind: 'matrix';
  /** In the order written: the first list is the outermost loop. */
  lists: { field: string; values: readonly unknown[] }[];
}

export type SourceEntry = TableEntry | FilesEntry | MatrixEntry;

