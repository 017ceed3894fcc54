import type { Readable } from 'node:stream';
import type { JobType } from '../../jobs/index.js';
import type { ManifestIssue } from '../errors.js';
import type { FileScope } from '../file-scope.js';
import type { SourcePosition } from '../types.js';

/** A place in some file: a CSV cell, a JSONL line, or a key of the manifest itself. */
export interface SourceLocation {
  /** The path as messages show it (relative to where the user ran the command). */
  file: string;
  line: number;
  col: number;
}

/**
 * One problem a source reader found, shaped as a ManifestIssue so the caller can report it as
 * one: `file:line:col field: expected …, got …; hint`. `ordinal` is the row it belongs to (absent
 * for a problem of the whole source: a missing file, a header, an id template).
 */
export interface SourceProblem extends ManifestIssue {
  ordinal?: number;
}

/**
 * One job's worth of input from a source: its raw fields (the entry's own job fields merged under
 * the row's) before defaults are merged and before validation, and where each came from.
 */
export interface SourceRow {
  /** 0-based among the rows this source yields (problems included), in the order it yields them. */
  ordinal: number;
  /** Always valid: a row without a usable type is a problem instead. Also in `fields.type`. */
  type: JobType;
  /** Field name → value; `id` when an id column or template gave one, absent otherwise. */
  fields: Record<string, unknown>;
  /** Where the row starts: a CSV row's first cell, a JSONL line, the manifest entry. */
  at: SourceLocation;
  /** Where a field's value was written (the row's start when the field has no place of its own). */
  fieldAt(field: string): SourceLocation;
}

export type SourceItem = { row: SourceRow; problem?: undefined } | { problem: SourceProblem; row?: undefined };

/**
 * Where something inside the source entry is written in the manifest: `path` is relative to the
 * entry (`['matrix', 'prompt', 1]`, `[]` for the entry itself); `key` asks for the key rather
 * than its value. A path that does not exist gives the nearest enclosing position.
 */
export type LocateInEntry = (path: readonly (string | number)[], target?: 'key' | 'value') => SourcePosition;

/** What every reader needs from the manifest being loaded. */
export interface SourceContext {
  /** The manifest as messages show it. */
  manifestFile: string;
  /** The manifest's folder, absolute: paths in the entry are relative to it. */
  manifestDir: string;
  /** Where files may be (`--allow-outside-files`); a files glob never leaves the folder anyway. */
  scope: FileScope;
  locate: LocateInEntry;
  /** Read from this stream instead of the entry's file (stdin for `-`); the entry's path still names it in messages. */
  input?: Readable | undefined;
}
