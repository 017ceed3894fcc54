import type { Readable } from 'node:stream';
import type { JobType, SourcePosition } from '../../jobs/index.js';
import type { ManifestIssue } from '../errors.js';
import type { FileScope } from '../files.js';
import type { IdTemplate } from './rows.js';

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
  /** As written, relative to the manifest's folder. */
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

/** A place in some file: a CSV cell, a JSONL line, or a key of the manifest itself; `file` as messages show it. */
export type SourceLocation = Required<SourcePosition>;

/** A problem a reader found; `ordinal` is its row's (absent for a problem of the whole source). */
export interface SourceProblem extends ManifestIssue {
  ordinal?: number;
}

/** One job's raw fields (the entry's own job fields under the row's), before defaults and validation. */
export interface SourceRow {
  /** 0-based among the items this source yields (problems included). */
  ordinal: number;
  /** Always valid (a row without a usable type is a problem instead); also in `fields.type`. */
  type: JobType;
  /** `id` when an id column or template gave one. */
  fields: Record<string, unknown>;
  /** Where the row starts: a CSV row's first cell, a JSONL line, the manifest entry. */
  at: SourceLocation;
  /** Where a field's value was written (the row's start when the field has no place of its own). */
  fieldAt(field: string): SourceLocation;
}

export type SourceItem = { row: SourceRow; problem?: undefined } | { problem: SourceProblem; row?: undefined };

/**
 * Where something inside the source entry is written in the manifest: `path` is relative to the
 * entry (`['matrix', 'prompt', 1]`, `[]` for the entry itself). A path that does not exist gives
 * the nearest enclosing position.
 */
export type LocateInEntry = (path: readonly (string | number)[], target?: 'key' | 'value') => SourcePosition;

/** What every reader needs from the manifest being loaded. */
export interface SourceContext {
  manifestFile: string;
  /** The manifest's folder, absolute: paths in the entry are relative to it. */
  manifestDir: string;
  scope: FileScope;
  locate: LocateInEntry;
  /** Read from this stream instead of the entry's file (stdin for `-`); the entry's path still names it. */
  input?: Readable | undefined;
}
