import { dirname, isAbsolute, join } from 'node:path';
import { isJobType, JOB_TYPES, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot, type ManifestIssue, closest, quotedList } from '../errors.js';
import { TYPE_FIELD } from '../fields.js';
import { type Complaint, type Filling, type Placeholder, renderId, unknownPlaceholder } from './template.js';
import type { SourceContext, SourceEntry, SourceItem, SourceLocation, SourceProblem, TableEntry } from './types.js';

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

/** The entry's id template's first placeholder the source cannot fill, as a problem at `id:`. */
export function templateProblem(
  entry: SourceEntry,
  context: SourceContext,
  offered: readonly string[],
  allowed = (p: Placeholder) => p.attribute !== 'index' && offered.includes(p.name),
): SourceItem | undefined {
  const complaint = entry.idTemplate === undefined ? undefined : unknownPlaceholder(entry.idTemplate, offered, allowed);
  return complaint === undefined ? undefined : problemAt(manifestAt(context, ['id']), complaintBody('id', complaint));
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
