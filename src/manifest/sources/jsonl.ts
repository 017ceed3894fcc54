import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { expectedGot, formatGot, printable } from '../errors.js';
import type { TableEntry } from './entry-types.js';
import { assembleRow, manifestAt, openSourceFile, problemAt, sourceDisplayPath } from './rows.js';
import type { SourceContext, SourceItem, SourceLocation } from './types.js';

const DETAIL_MAX_CHARS = 60;

/** V8's words for a JSON syntax error, without the line itself (which may be a megabyte long), and where it is. */
function syntaxDetail(error: unknown): { detail: string; col: number } {
  const message = error instanceof Error ? error.message : String(error);
  const positioned = /^(.*?) in JSON at position (\d+)/.exec(message);
  if (positioned !== null) return { detail: printable(positioned[1] ?? '', DETAIL_MAX_CHARS), col: Number(positioned[2]) + 1 };
  const token = /^Unexpected token '(.+?)', /.exec(message);
  return { detail: token === null ? printable(message, DETAIL_MAX_CHARS) : `unexpected ${printable(token[1] ?? '', 8)}`, col: 1 };
}

/** The 1-based column of the value of `key` in a JSON line, when it can be found simply. */
function valueColumn(line: string, key: string): number | undefined {
  const quoted = JSON.stringify(key);
  for (let from = line.indexOf(quoted); from !== -1; from = line.indexOf(quoted, from + 1)) {
    const colon = /^\s*:\s*/.exec(line.slice(from + quoted.length, from + quoted.length + 64));
    if (colon !== null) return from + quoted.length + colon[0].length + 1;
  }
  return undefined;
}

interface LineRow {
  line: string;
  object: Record<string, unknown>;
  ordinal: number;
  at: SourceLocation;
}

/** The entry's `columns` read the other way: key → fields it fills. */
function fieldsByKey(entry: TableEntry): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const [field, key] of Object.entries(entry.columns)) byKey.set(key, [...(byKey.get(key) ?? []), field]);
  return byKey;
}

function lineItem(entry: TableEntry, byKey: Map<string, string[]>, row: LineRow, context: SourceContext): SourceItem {
  const fields: Record<string, unknown> = { ...entry.fields };
  for (const [key, value] of Object.entries(row.object)) {
    // null means "not given", as an empty cell does: the field takes the entry's value or the default.
    if (value === null) continue;
    // Assigned, this key would replace the row object's prototype instead of adding a field.
    if (key === '__proto__') return problemAt(row.at, { field: key, message: 'unknown field' }, row.ordinal);
    const mapped = byKey.get(key);
    if (mapped !== undefined) for (const field of mapped) fields[field] = value;
    else if (entry.columns[key] !== undefined) {
      const from = entry.columns[key];
      const at = { ...row.at, col: valueColumn(row.line, key) ?? 1 };
      return problemAt(at, { field: key, ...expectedGot('each key read once', `"${key}" (${key} is read from key "${from}")`), hint: `remove ${key}, or map it to another field in columns:` }, row.ordinal);
    } else fields[key] = value;
  }
  const fieldAt = (field: string): SourceLocation => {
    const renamed = entry.columns[field];
    const key = renamed !== undefined && renamed in row.object ? renamed : field;
    const own = row.object[key] !== undefined && row.object[key] !== null;
    if (!own) return field in entry.fields ? manifestAt(context, [field]) : row.at;
    const col = valueColumn(row.line, key);
    return col === undefined ? row.at : { ...row.at, col };
  };
  return assembleRow({ ordinal: row.ordinal, entry, fields, at: row.at, fieldAt });
}

function parseLine(line: string, at: SourceLocation, ordinal: number): { object: Record<string, unknown> } | { item: SourceItem } {
  let value: unknown;
  try {
    value = JSON.parse(line) as unknown;
  } catch (error) {
    const { detail, col } = syntaxDetail(error);
    return { item: problemAt({ ...at, col }, expectedGot('a JSON object (one job a line)', `not JSON (${detail})`), ordinal) };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { object: value as Record<string, unknown> };
  return { item: problemAt(at, expectedGot('a JSON object (one job a line)', formatGot(value)), ordinal) };
}

/**
 * Rows of a JSON Lines source, streamed a line at a time: each non-blank line one JSON object
 * whose keys are fields (`columns: { field: key }` renames). Located `file:line:col`, the column
 * being where the value of the field in question starts when it can be found, else 1. A key no
 * field has is passed on as it is, for validation to report as an unknown field. Reads
 * `context.input` instead of the file when given (stdin).
 */
export async function* readJsonl(entry: TableEntry, context: SourceContext): AsyncGenerator<SourceItem> {
  const display = sourceDisplayPath(context.manifestFile, entry.file);
  let input: Readable;
  if (context.input !== undefined) input = context.input;
  else {
    const opened = await openSourceFile(context, entry.kind, entry.file);
    if ('problem' in opened) return yield opened.problem;
    input = createReadStream(opened.path, { encoding: 'utf8' });
  }
  const lines = createInterface({ input, crlfDelay: Infinity });
  const byKey = fieldsByKey(entry);
  let lineNumber = 0;
  let ordinal = 0;
  try {
    for await (const text of lines) {
      lineNumber += 1;
      const line = lineNumber === 1 ? text.replace(/^\uFEFF/, '') : text;
      if (line.trim() === '') continue;
      const at = { file: display, line: lineNumber, col: 1 };
      const parsed = parseLine(line, at, ordinal);
      yield 'item' in parsed ? parsed.item : lineItem(entry, byKey, { line, object: parsed.object, ordinal, at }, context);
      ordinal += 1;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
