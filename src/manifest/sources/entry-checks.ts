import { isJobType, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot } from '../errors.js';
import { closest, editDistance, quotedList } from '../suggest.js';
import { SOURCE_KINDS, type SourceKind, type TableKind } from './entry-types.js';
import { jobFieldNames, jobFieldSpec, kindsWithField, TYPE_FIELD } from './job-fields.js';
import { type IdTemplate, parseIdTemplate, placeholders } from './template.js';
import type { SourceProblem } from './types.js';

/** Checks shared by every kind of source entry; each reports through `report` and returns what is usable. */
export const FILE_WORDS: Record<TableKind, string> = { csv: 'a CSV file', tsv: 'a TSV file', jsonl: 'a JSON Lines file' };
const KINDS_TEXT = 'csv, tsv, jsonl, files or matrix';

/** Reports a problem at a path inside the entry. */
export type Check = (problem: Omit<SourceProblem, 'file' | 'line' | 'col'> & { path: readonly (string | number)[]; target?: 'key' }) => void;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function nonEmptyText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

export function sourceKindOf(raw: Record<string, unknown>, report: Check): SourceKind | undefined {
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

export function typeOf(raw: Record<string, unknown>, report: Check): JobType | undefined {
  if (!('type' in raw)) return undefined;
  if (isJobType(raw['type'])) return raw['type'];
  report({ path: ['type'], field: 'type', ...expectedGot(TYPE_FIELD.expected, formatGot(raw['type'])) });
  return undefined;
}

export function templateOf(raw: Record<string, unknown>, kind: SourceKind, report: Check): IdTemplate | undefined {
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
export function checkFieldName(field: string, type: JobType | undefined, path: readonly (string | number)[], report: Check, extra: readonly string[], label = field): boolean {
  if (type === undefined ? jobFieldNames().includes(field) : jobFieldSpec(type, field) !== undefined) return true;
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

export function checkFieldValue(field: string, value: unknown, type: JobType | undefined, path: readonly (string | number)[], report: Check): void {
  const spec = field === 'type' ? TYPE_FIELD : type === undefined ? undefined : jobFieldSpec(type, field);
  if (spec === undefined || spec.schema.safeParse(value).success) return;
  report({ path, field, ...expectedGot(spec.expected, formatGot(value)) });
}
