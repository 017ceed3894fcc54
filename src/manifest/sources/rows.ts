import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isJobType, JOB_TYPES, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot, type ManifestIssue } from '../errors.js';
import { confine } from '../file-scope.js';
import { closest, quotedList } from '../suggest.js';
import type { SourceEntry } from './entry-types.js';
import { TYPE_FIELD } from './job-fields.js';
import { type Complaint, type Filling, type Placeholder, renderId } from './template.js';
import type { SourceContext, SourceItem, SourceLocation, SourceProblem } from './types.js';

/** Rows a reader of an in-memory list (files, matrix) hands over at once, as a file's chunk would. */
export const BATCH_ROWS = 1000;

/** The pieces of a message a problem carries besides where it is. */
export type ProblemBody = Pick<ManifestIssue, 'field' | 'message' | 'expected' | 'got' | 'hint'>;

export function problemAt(at: SourceLocation, body: ProblemBody, ordinal?: number): SourceItem {
  const problem: SourceProblem = { file: at.file, line: at.line, col: at.col, ...body };
  if (problem.hint === undefined) delete problem.hint;
  if (problem.field === undefined) delete problem.field;
  if (ordinal !== undefined) problem.ordinal = ordinal;
  return { problem };
}

export function complaintBody(field: string | undefined, complaint: Complaint): ProblemBody {
  return { ...(field === undefined ? {} : { field }), ...expectedGot(complaint.expected, complaint.got), hint: complaint.hint };
}

/** A source file's path as messages show it: beside the manifest as the user named it. */
export function sourceDisplayPath(manifestFile: string, written: string): string {
  return isAbsolute(written) ? written : join(dirname(manifestFile), written);
}

/** A place in the manifest, inside the source entry. */
export function manifestAt(context: SourceContext, path: readonly (string | number)[], target?: 'key'): SourceLocation {
  return { file: context.manifestFile, ...context.locate(path, target) };
}

/**
 * The file a table source reads, checked as every file a manifest names is (inside the manifest's
 * folder unless `--allow-outside-files`, a regular file): its real path, or the problem, located
 * at the entry's key (`csv: chapters.csv`).
 */
export async function openSourceFile(context: SourceContext, key: string, written: string): Promise<{ path: string } | { problem: SourceItem }> {
  const at = manifestAt(context, [key]);
  const fail = (expected: string, detail: string, hint?: string) => ({ problem: problemAt(at, { field: key, ...expectedGot(expected, `${formatGot(written)} (${detail})`), hint }) });
  const where = await confine(context.scope, resolve(context.manifestDir, written));
  if (!where.ok) return fail(where.expected, where.detail, where.hint);
  try {
    const info = await stat(where.value);
    if (info.isFile()) return { path: where.value };
    return fail('a regular file', info.isDirectory() ? 'a directory' : 'not a regular file');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return fail('an existing file', 'no such file', "paths are relative to the manifest's folder");
    return fail('a readable file', `cannot read it: ${code ?? String(error)}`);
  }
}

export interface RowInput {
  ordinal: number;
  entry: SourceEntry;
  /** The entry's fields with the row's own over them, still raw. */
  fields: Record<string, unknown>;
  at: SourceLocation;
  fieldAt(field: string): SourceLocation;
  /** Turns raw values into what their fields want once the row's type is known (CSV cells). */
  coerce?: ((type: JobType, fields: Record<string, unknown>) => void) | undefined;
  /** Fills an id template's placeholders; by default from the row's fields and `{n}`. */
  fill?: ((placeholder: Placeholder) => Filling | undefined) | undefined;
}

function typeProblem(input: RowInput, given: unknown): SourceItem {
  if (given === undefined) {
    const hint = 'give the row a type, or set type: on the source entry';
    return problemAt(input.at, { field: 'type', ...expectedGot(TYPE_FIELD.expected, 'nothing'), hint }, input.ordinal);
  }
  const near = typeof given === 'string' ? closest(given, JOB_TYPES, 1) : [];
  const hint = near.length > 0 ? `did you mean ${quotedList(near)}?` : undefined;
  return problemAt(input.fieldAt('type'), { field: 'type', ...expectedGot(TYPE_FIELD.expected, formatGot(given)), hint }, input.ordinal);
}

/**
 * The row as a reader yields it: its type settled (the row's own, else the entry's), its values
 * coerced, its id made from the entry's template unless the row gives one itself. A row whose
 * type or id cannot be settled is a problem instead.
 */
export function assembleRow(input: RowInput): SourceItem {
  const { fields, entry, ordinal } = input;
  const given = fields['type'] ?? entry.type;
  if (!isJobType(given)) return typeProblem(input, given);
  fields['type'] = given;
  input.coerce?.(given, fields);
  if (entry.idTemplate !== undefined && fields['id'] === undefined) {
    const fill = input.fill ?? ((p: Placeholder) => (p.name === 'n' ? { value: ordinal + 1 } : Object.hasOwn(fields, p.name) ? { value: fields[p.name] } : undefined));
    const id = renderId(entry.idTemplate, fill);
    // A value that makes no id is shown where it is written (a cell, a matrix value).
    if (!id.ok) return problemAt(id.placeholder === undefined ? input.at : input.fieldAt(id.placeholder.name), complaintBody('id', id), ordinal);
    fields['id'] = id.value;
  }
  return { row: { ordinal, type: given, fields, at: input.at, fieldAt: input.fieldAt } };
}
