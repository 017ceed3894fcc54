import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { expectedGot, formatGot, printable } from '../errors.js';
import { sizeText } from '../files.js';
import type { SourceContext, SourceItem, SourceLocation, TableEntry } from './types.js';
import { assembleRow, manifestAt, problemAt, sourceDisplayPath } from './rows.js';
import { MAX_RECORD_CHARS, NOT_UTF8, openTable, REPLACEMENT_CHAR } from './table-input.js';

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

function conflict(entry: TableEntry, row: LineRow, key: string): SourceItem {
  const from = entry.columns[key];
  const at = { ...row.at, col: valueColumn(row.line, key) ?? 1 };
  const hint = `remove ${key}, or map it to another field in columns:`;
  return problemAt(at, { field: key, ...expectedGot('each key read once', `"${key}" (${key} is read from key "${from}")`), hint }, row.ordinal);
}

/**
 * The row's fields: the object itself when nothing is renamed or added (no copy a line), else the
 * entry's fields with the line's over them. null means "not given", as an empty cell does.
 */
function fieldsOfLine(entry: TableEntry, byKey: Map<string, string[]>, row: LineRow): { fields: Record<string, unknown> } | { item: SourceItem } {
  const plain = byKey.size === 0 && Object.keys(entry.fields).length === 0;
  const fields: Record<string, unknown> = plain ? row.object : { ...entry.fields };
  for (const key in row.object) {
    const value = row.object[key];
    // Assigned, this key would replace the row object's prototype instead of adding a field.
    if (key === '__proto__') return { item: problemAt(row.at, { field: key, message: 'unknown field' }, row.ordinal) };
    if (value === null) {
      if (plain) delete fields[key];
      continue;
    }
    if (plain) continue;
    const mapped = byKey.get(key);
    if (mapped !== undefined) for (const field of mapped) fields[field] = value;
    else if (Object.hasOwn(entry.columns, key)) return { item: conflict(entry, row, key) };
    else fields[key] = value;
  }
  return { fields };
}

function lineItem(entry: TableEntry, byKey: Map<string, string[]>, row: LineRow, context: SourceContext): SourceItem {
  const read = fieldsOfLine(entry, byKey, row);
  if ('item' in read) return read.item;
  const ownAt = (field: string): SourceLocation | undefined => {
    const renamed = Object.hasOwn(entry.columns, field) ? entry.columns[field] : undefined;
    const key = renamed !== undefined && Object.hasOwn(row.object, renamed) ? renamed : field;
    if (!Object.hasOwn(row.object, key) || row.object[key] === null) return undefined;
    return { file: row.at.file, line: row.at.line, col: valueColumn(row.line, key) ?? 1 };
  };
  return assembleRow({ ordinal: row.ordinal, entry, context, fields: read.fields, at: row.at, ownAt });
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
 * Rows of a JSON Lines source, in the batches one chunk of input held: each non-blank line one JSON
 * object whose keys are fields (`columns: { field: key }` renames). Located `file:line:col`, the
 * column where the field's value starts when it can be found simply. A key no field has is passed
 * on, for validation to report as an unknown field.
 */
export async function* readJsonl(entry: TableEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  const display = sourceDisplayPath(context.manifestFile, entry.file);
  const opened = await openTable(entry, context);
  if ('problem' in opened) return yield [opened.problem];
  const byKey = fieldsByKey(entry);
  const itemOf = (line: string, at: SourceLocation, ordinal: number): SourceItem => {
    const notUtf8 = opened.input.invalid ? line.indexOf(REPLACEMENT_CHAR) : -1;
    if (notUtf8 !== -1) return problemAt({ ...at, col: notUtf8 + 1 }, NOT_UTF8, ordinal);
    const parsed = parseLine(line, at, ordinal);
    if ('item' in parsed) return parsed.item;
    return lineItem(entry, byKey, { line, object: parsed.object, ordinal, at }, context);
  };
  let lineNumber = 0;
  let ordinal = 0;
  try {
    for await (const batch of linesOf(opened.input)) {
      const items: SourceItem[] = [];
      for (const text of batch) {
        lineNumber += 1;
        const at = { file: display, line: lineNumber, col: 1 };
        if (typeof text !== 'string') {
          items.push(problemAt(at, { ...expectedGot('a line of at most 4 MB', sizeText(text.bytes, MAX_RECORD_CHARS)), hint: "one JSON object a line; a job's text is at most 1 MB" }, ordinal++));
          continue;
        }
        const line = lineNumber === 1 ? text.replace(/^\uFEFF/, '') : text;
        if (line.trim() !== '') items.push(itemOf(line, at, ordinal++));
      }
      if (items.length > 0) yield items;
    }
    // As `jobs: []` is refused: an empty pipe (a failed command before it) is a mistake, not a batch.
    if (ordinal === 0 && context.input !== undefined) {
      yield [problemAt({ file: display, line: 1, col: 1 }, { ...expectedGot('at least one job (one JSON object a line)', 'nothing'), hint: 'pipe or redirect the jobs in (< jobs.jsonl)' })];
    }
  } finally {
    opened.source.destroy();
  }
}

/** A line too long to hold: only its size is kept, for the message. */
type LongLine = { bytes: number };

function lineOrLong(line: string): string | LongLine {
  if (line.length > MAX_RECORD_CHARS) return { bytes: Buffer.byteLength(line) };
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/**
 * The lines of a stream, a chunk's worth at a time, a CR before each LF dropped (node:readline's
 * iterator costs a round of promises per line). A line past MAX_RECORD_CHARS is only counted.
 */
async function* linesOf(input: Readable): AsyncGenerator<(string | LongLine)[]> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let longBytes: number | undefined;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    let text = decoder.write(chunk);
    if (longBytes !== undefined) {
      const end = text.indexOf('\n');
      longBytes += Buffer.byteLength(end === -1 ? text : text.slice(0, end));
      if (end === -1) continue;
      yield [{ bytes: longBytes }];
      longBytes = undefined;
      text = text.slice(end + 1);
    }
    const lines = (carry + text).split('\n');
    carry = lines.pop() ?? '';
    if (lines.length > 0) yield lines.map(lineOrLong);
    if (carry.length > MAX_RECORD_CHARS) {
      longBytes = Buffer.byteLength(carry);
      carry = '';
    }
  }
  const rest = carry + decoder.end();
  if (longBytes !== undefined) yield [{ bytes: longBytes + Buffer.byteLength(rest) }];
  else if (rest !== '') yield [lineOrLong(rest)];
}
