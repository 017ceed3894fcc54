import { kindOf, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot } from '../errors.js';
import { checkFieldName, checkFieldValue, type Check, FILE_WORDS, isRecord, nonEmptyText, sourceKindOf, templateOf, typeOf } from './entry-checks.js';
import { type FilesEntry, type MatrixEntry, OWN_KEYS, type SourceEntry, type SourceKind, type TableEntry, type TableKind } from './entry-types.js';
import { TYPE_FIELD } from './job-fields.js';
import type { LocateInEntry, SourceProblem } from './types.js';

/** A matrix this large is a mistake (ten lists of ten values), not a batch anyone means to pay for. */
export const MAX_MATRIX_COMBINATIONS = 10_000_000;

export interface EntryContext {
  /** The manifest as messages show it. */
  manifestFile: string;
  locate: LocateInEntry;
}

type Common = Pick<SourceEntry, 'type' | 'idTemplate' | 'fields'>;

/** Job fields written on the entry, each known to its kind and valid for it; they apply to every row. */
function entryFields(raw: Record<string, unknown>, kind: SourceKind, type: JobType | undefined, report: Check): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (OWN_KEYS[kind].includes(key)) continue;
    if (!checkFieldName(key, type, [key], report, OWN_KEYS[kind])) continue;
    checkFieldValue(key, value, type, [key], report);
    fields[key] = value;
  }
  return fields;
}

function tableEntry(raw: Record<string, unknown>, kind: TableKind, common: Common, report: Check): TableEntry {
  const file = raw[kind];
  if (!nonEmptyText(file)) report({ path: [kind], field: kind, ...expectedGot(`a path to ${FILE_WORDS[kind]}`, formatGot(file)) });
  const columns: Record<string, string> = {};
  const given = raw['columns'];
  if (given !== undefined && !isRecord(given)) {
    report({ path: ['columns'], field: 'columns', ...expectedGot(`a mapping of field: ${kind === 'jsonl' ? 'key' : 'column'}`, formatGot(given)) });
  }
  for (const [field, column] of Object.entries(isRecord(given) ? given : {})) {
    if (!checkFieldName(field, common.type, ['columns', field], report, [], `columns.${field}`)) continue;
    if (nonEmptyText(column)) columns[field] = column;
    else report({ path: ['columns', field], field: `columns.${field}`, ...expectedGot(kind === 'jsonl' ? 'a key name' : 'a column name', formatGot(column)) });
  }
  return { kind, file: String(file), columns, ...common };
}

/**
 * A pattern that could reach outside the manifest's folder, whatever `--allow-outside-files` says:
 * in any of its brace alternatives too (`{*.txt,/etc/*}`), which the walk would silently skip.
 */
function escapes(glob: string): boolean {
  return /(^|[{,])([\\/]|[A-Za-z]:)/.test(glob) || glob.split(/[\\/{},]+/).includes('..');
}

function filesEntry(raw: Record<string, unknown>, common: Common, report: Check): FilesEntry {
  const glob = raw['files'];
  if (!nonEmptyText(glob)) report({ path: ['files'], field: 'files', ...expectedGot('a pattern such as "chapters/*.txt"', formatGot(glob)) });
  else if (escapes(glob)) {
    const hint = "a files pattern never leaves the manifest's folder; move the files into it";
    report({ path: ['files'], field: 'files', ...expectedGot("a pattern inside the manifest's folder", formatGot(glob)), hint });
  }
  if (!('type' in raw)) report({ path: [], field: 'type', ...expectedGot(`${TYPE_FIELD.expected} (each file becomes a job of that type)`, 'nothing') });
  const field = raw['field'];
  const type = common.type;
  const fileFields = type === undefined ? undefined : Object.keys(kindOf(type).files);
  if (!nonEmptyText(field)) {
    const hint = fileFields === undefined || fileFields.length === 0 ? undefined : `for ${type}: ${fileFields.join(', ')}`;
    report({ path: ['field'], field: 'field', ...expectedGot('the field each file fills', formatGot(field)), ...(hint === undefined ? {} : { hint }) });
  } else if (fileFields !== undefined && !fileFields.includes(field)) {
    const expected = fileFields.length === 0 ? `a field that names a file (${type} jobs name none)` : `a field that names a file: ${fileFields.join(', ')}`;
    report({ path: ['field'], field: 'field', ...expectedGot(expected, formatGot(field)) });
  } else if (Object.hasOwn(common.fields, field)) {
    report({ path: [field], target: 'key', field, ...expectedGot(`${field} only from the files`, 'it on the entry as well'), hint: `remove ${field}: the files fill it` });
  }
  return { kind: 'files', glob: String(glob), field: String(field), ...common, type: type as JobType };
}

function matrixList(field: string, values: unknown, common: Common, report: Check): readonly unknown[] | undefined {
  if (!checkFieldName(field, common.type, ['matrix', field], report, [], `matrix.${field}`)) return undefined;
  if (field === 'id') {
    report({ path: ['matrix', field], target: 'key', field: 'matrix.id', message: 'unknown field', hint: 'ids come from the entry\'s id template, e.g. id: "promo-{prompt.index}"' });
    return undefined;
  }
  if (Object.hasOwn(common.fields, field) || (field === 'type' && common.type !== undefined)) {
    report({ path: [field], target: 'key', field, ...expectedGot(`${field} once (it is a list of the matrix)`, 'it on the entry as well'), hint: 'remove one of them' });
  }
  if (!Array.isArray(values) || values.length === 0) {
    report({ path: ['matrix', field], field: `matrix.${field}`, ...expectedGot('a list of at least one value', formatGot(values)) });
    return undefined;
  }
  values.forEach((value, i) => checkFieldValue(field, value, field === 'type' ? undefined : common.type, ['matrix', field, i], report));
  return values;
}

function matrixEntry(raw: Record<string, unknown>, common: Common, report: Check): MatrixEntry {
  const given = raw['matrix'];
  const lists: MatrixEntry['lists'] = [];
  if (!isRecord(given) || Object.keys(given).length === 0) {
    report({ path: ['matrix'], field: 'matrix', ...expectedGot('a mapping of field: [values…]', formatGot(given)) });
    return { kind: 'matrix', lists, ...common };
  }
  for (const [field, values] of Object.entries(given)) {
    const list = matrixList(field, values, common, report);
    if (list !== undefined) lists.push({ field, values: list });
  }
  if (!('type' in raw) && !('type' in given)) {
    report({ path: [], field: 'type', ...expectedGot(`${TYPE_FIELD.expected}, on the entry or as a list of the matrix`, 'nothing') });
  }
  const combinations = lists.reduce((product, list) => product * list.values.length, 1);
  if (combinations > MAX_MATRIX_COMBINATIONS) {
    report({ path: ['matrix'], field: 'matrix', ...expectedGot(`at most ${MAX_MATRIX_COMBINATIONS.toLocaleString('en-US')} combinations`, combinations.toLocaleString('en-US')) });
  }
  return { kind: 'matrix', lists, ...common };
}

/**
 * Checks one `sources:` entry and reads it into a SourceEntry. Every problem is reported, located
 * in the manifest through `context.locate`; the entry comes back only when there is none, so a
 * source with a broken entry is never read (its rows would repeat the same problem each).
 */
export function parseSourceEntry(raw: unknown, context: EntryContext): { entry?: SourceEntry; problems: SourceProblem[] } {
  const problems: SourceProblem[] = [];
  const report: Check = ({ path, target, ...rest }) => problems.push({ file: context.manifestFile, ...context.locate(path, target), ...rest });
  if (!isRecord(raw)) {
    report({ path: [], ...expectedGot('a source entry: a mapping with one of csv, tsv, jsonl, files or matrix', formatGot(raw)) });
    return { problems };
  }
  const kind = sourceKindOf(raw, report);
  if (kind === undefined) return { problems };
  const type = typeOf(raw, report);
  const idTemplate = templateOf(raw, kind, report);
  const common: Common = { type, idTemplate, fields: entryFields(raw, kind, type, report) };
  const entry = kind === 'files' ? filesEntry(raw, common, report) : kind === 'matrix' ? matrixEntry(raw, common, report) : tableEntry(raw, kind, common, report);
  return problems.length > 0 ? { problems } : { entry, problems };
}
