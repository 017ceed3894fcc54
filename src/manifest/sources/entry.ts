import { isJobType, kindOf, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot, closest, editDistance, quotedList } from '../errors.js';
import { fieldSpecFor, FROM_TEMPLATE, fromOf, jobFieldNames, kindsWithField } from '../fields.js';
import { TYPE_FIELD, withInputs } from '../fields.js';
import { type IdTemplate, parseIdTemplate, placeholders } from './rows.js';
import { OWN_KEYS, SOURCE_KINDS, type SourceContext, type SourceEntry, type SourceKind } from './types.js';
import type { FilesEntry, MatrixEntry, SourceProblem, TableEntry, TableKind } from './types.js';

const FILE_WORDS: Record<TableKind, string> = { csv: 'a CSV file', tsv: 'a TSV file', jsonl: 'a JSON Lines file' };
const KINDS_TEXT = 'csv, tsv, jsonl, files or matrix';

/** Reports a problem at a path inside the entry. */
type Check = (problem: Omit<SourceProblem, 'file' | 'line' | 'col'> & { path: readonly (string | number)[]; target?: 'key' }) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonEmptyText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function sourceKindOf(raw: Record<string, unknown>, report: Check): SourceKind | undefined {
  const given = SOURCE_KINDS.filter((kind) => kind in raw);
  if (given.length === 1) return given[0];
  if (given.length > 1) {
    report({ path: [given[1] ?? ''], ...expectedGot('one source per entry', `both ${given[0]} and ${given[1]}`), hint: 'make them two entries' });
    return undefined;
  }
  // Source keys are short: a swap of two letters (`cvs`) is two edits, more than `closest` allows them.
  const near = Object.keys(raw).flatMap((key) => SOURCE_KINDS.filter((kind) => key.length >= 3 && editDistance(key, kind) <= 2).map((kind) => ({ key, kind })));
  const hint = near[0] === undefined ? undefined : `did you mean ${near[0].kind} instead of ${near[0].key}?`;
  report({ path: [], ...expectedGot(`a source entry with one of ${KINDS_TEXT}`, 'none of them'), ...(hint === undefined ? {} : { hint }) });
  return undefined;
}

function templateOf(raw: Record<string, unknown>, kind: SourceKind, report: Check): IdTemplate | undefined {
  if (!('id' in raw)) return undefined;
  const value = raw['id'];
  if (!nonEmptyText(value)) {
    report({ path: ['id'], field: 'id', ...expectedGot('an id template such as "ch-{stem}"', formatGot(value)) });
    return undefined;
  }
  const parsed = parseIdTemplate(value);
  if (!parsed.ok) {
    report({ path: ['id'], field: 'id', ...expectedGot(parsed.expected, parsed.got), ...(parsed.hint === undefined ? {} : { hint: parsed.hint }) });
    return undefined;
  }
  // Without a placeholder every row would get the same id: `id: chapter` most likely meant a column.
  if (placeholders(parsed.value).length === 0) {
    const hint = kind === 'files' || kind === 'matrix' ? 'add a placeholder such as {n}' : `to take ids from a column, map it: columns: { id: ${value} }`;
    report({ path: ['id'], field: 'id', ...expectedGot('an id template with a placeholder (each row needs an id of its own)', formatGot(value)), hint });
    return undefined;
  }
  return parsed.value;
}

/** A job field written on the entry (or as a column mapping's key): known to the kind, and valid when the kind is known. */
function checkFieldName(field: string, type: JobType | undefined, path: readonly (string | number)[], report: Check, extra: readonly string[], label = field): boolean {
  if (type === undefined ? jobFieldNames().includes(field) : fieldSpecFor(type, field) !== undefined) return true;
  const others = kindsWithField(field);
  const allowed = [...new Set([...extra, ...jobFieldNames(type)])];
  const near = closest(field, allowed, 1);
  const hint =
    others.length > 0 && type !== undefined
      ? `${field} is a field of ${others.join(', ')} jobs, not ${type}`
      : near.length > 0
        ? `did you mean ${quotedList(near)}?`
        : `allowed here: ${allowed.join(', ')}`;
  report({ path, target: 'key', field: label, message: 'unknown field', hint });
  return false;
}

function checkFieldValue(field: string, value: unknown, type: JobType | undefined, path: readonly (string | number)[], report: Check): void {
  const spec = field === 'type' ? TYPE_FIELD : type === undefined ? undefined : fieldSpecFor(type, field);
  if (spec === undefined) return;
  // `{ from: "img-{stem}" }`: an id template, filled per row (rows.ts).
  const schema = type === undefined ? spec.schema : withInputs(type, field, spec.schema, FROM_TEMPLATE);
  if (!schema.safeParse(value).success) report({ path, field, ...expectedGot(spec.expected, formatGot(value)) });
  for (const item of Array.isArray(value) ? value : [value]) {
    const from = fromOf(item);
    const parsed = from === undefined || type === undefined ? undefined : parseIdTemplate(from);
    if (parsed?.ok !== false) continue;
    const hint = parsed.hint === undefined ? {} : { hint: parsed.hint };
    report({ path, field, ...expectedGot(parsed.expected, parsed.got), ...hint });
  }
}

/** A matrix this large is a mistake (ten lists of ten values), not a batch anyone means to pay for. */
const MAX_MATRIX_COMBINATIONS = 10_000_000;

type EntryContext = Pick<SourceContext, 'manifestFile' | 'locate'>;

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
  } else if (Object.hasOwn(common.fields, field) && fromOf(common.fields[field]) === undefined) {
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
  if ('type' in raw) checkFieldValue('type', raw['type'], undefined, ['type'], report);
  const type = isJobType(raw['type']) ? raw['type'] : undefined;
  const idTemplate = templateOf(raw, kind, report);
  const common: Common = { type, idTemplate, fields: entryFields(raw, kind, type, report) };
  const entry = kind === 'files' ? filesEntry(raw, common, report) : kind === 'matrix' ? matrixEntry(raw, common, report) : tableEntry(raw, kind, common, report);
  return problems.length > 0 ? { problems } : { entry, problems };
}
