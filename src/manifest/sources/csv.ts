import { pipeline, type Readable } from 'node:stream';
import { CsvError, parse, type Parser } from 'csv-parse';
import type * as z from 'zod';
import type { JobType, FieldSpec } from '../../jobs/index.js';
import { expectedGot } from '../errors.js';
import { fieldSpecFor } from '../fields.js';
import { type ColumnPlan, planColumns } from './csv-columns.js';
import { assembleRow, manifestAt, type ProblemBody, problemAt, sourceDisplayPath } from './rows.js';
import { MAX_RECORD_CHARS, NOT_UTF8, openTable, REPLACEMENT_CHAR } from './table-input.js';
import type { SourceContext, SourceItem, SourceLocation, TableEntry } from './types.js';

const LINE_BREAKS = /\r\n|\r|\n/g;

/**
 * The lines a row spans: one, plus the line breaks inside its quoted cells, kept as written. Empty
 * lines come through as rows of one empty cell, so every line is counted. (csv-parse's own `info`
 * line count is off for CRLF files with quoted line breaks, and asking for it halves the speed.)
 */
function linesOf(cells: readonly string[]): number {
  let count = 1;
  for (const cell of cells) if (cell.includes('\n') || cell.includes('\r')) count += cell.match(LINE_BREAKS)?.length ?? 0;
  return count;
}

function parseErrorBody(error: CsvError): ProblemBody {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return { ...expectedGot('a closing quote (")', 'the end of the file'), hint: 'a quoted cell starts here and never ends; close it, and double every quote inside it ("")' };
    case 'CSV_MAX_RECORD_SIZE':
      return tooLongBody(typeof error['index'] === 'number' ? error['index'] + 1 : 1);
    default:
      return expectedGot('well-formed CSV', error.message);
  }
}

// Cells of a row past which a 4 MB row is too many cells, not one cell that never ends.
const MANY_CELLS = 100;

/** Why a row ran past 4 MB: a quote left open makes one endless cell; a wrong file, endless cells. */
function tooLongBody(cells: number): ProblemBody {
  if (cells < MANY_CELLS) return expectedGot('a row of at most 4 MB', 'more (is a quote left open?)');
  const got = `more, in ${cells.toLocaleString('en-US')} cells and counting`;
  return { ...expectedGot('a row of at most 4 MB', got), hint: 'no list of jobs has rows this wide: is this the right file, with the right delimiter?' };
}

/** Coerces a row's cells once its type is known; each field's shape is worked out once per type. */
function cellReader(plan: ColumnPlan): (type: JobType, fields: Record<string, unknown>) => void {
  const mapped = [...plan.columnOf.keys()].filter((field) => field !== 'type');
  const shapes = new Map<JobType, [string, CellShape][]>();
  return (type, fields) => {
    let shaped = shapes.get(type);
    if (shaped === undefined) {
      shaped = mapped.map((field): [string, CellShape] => [field, cellShape(fieldSpecFor(type, field))]);
      shapes.set(type, shaped);
    }
    for (const [field, shape] of shaped) {
      const value = fields[field];
      if (typeof value === 'string' && shape !== 'text') fields[field] = coerceCell(value, shape);
    }
  };
}

interface Table {
  entry: TableEntry;
  plan: ColumnPlan;
  coerce: (type: JobType, fields: Record<string, unknown>) => void;
  context: SourceContext;
  /** The header's cells: every row has as many. */
  width: number;
}

function rowItem({ entry, plan, coerce, context }: Table, cells: readonly string[], ordinal: number, at: SourceLocation): SourceItem {
  const fields: Record<string, unknown> = Object.assign({}, entry.fields);
  cells.forEach((cell, i) => {
    if (cell.trim() === '') return;
    for (const field of plan.fieldsOf[i] ?? []) fields[field] = cell;
  });
  const ownAt = (field: string): SourceLocation | undefined => {
    const column = plan.columnOf.get(field);
    if (column !== undefined && (cells[column] ?? '').trim() !== '') return { file: at.file, line: at.line, col: column + 1 };
    return undefined;
  };
  return assembleRow({ ordinal, entry, context, fields, at, ownAt, coerce });
}

/**
 * Rows of a CSV or TSV source, in the batches csv-parse has ready; no row is kept once yielded.
 * The header is row 1; a problem is at `file:line:cell`, the line its row starts on. Blank rows
 * are skipped; an empty cell leaves its field to the entry or defaults. A malformed quote ends the
 * reading: everything after it would be guesswork.
 */
export async function* readCsv(entry: TableEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  const display = sourceDisplayPath(context.manifestFile, entry.file);
  const opened = await openTable(entry, context);
  if ('problem' in opened) return yield [opened.problem];
  // pipeline: an error or an early stop on either side tears both down.
  const records = batchesOf(pipeline(opened.input, parser(entry), () => undefined));
  const delimiterName = entry.kind === 'tsv' ? 'tab' : 'comma';
  let linesRead = 0;
  let table: Table | undefined;
  let ordinal = 0;
  try {
    for await (const batch of records) {
      const items: SourceItem[] = [];
      for (const record of batch) {
        const line = linesRead + 1;
        linesRead += linesOf(record);
        const at = (col: number): SourceLocation => ({ file: display, line, col });
        if (record.every((cell) => cell.trim() === '')) continue;
        const notUtf8 = opened.input.invalid ? record.findIndex((cell) => cell.includes(REPLACEMENT_CHAR)) : -1;
        if (notUtf8 !== -1) {
          if (table === undefined) return yield [problemAt(at(notUtf8 + 1), NOT_UTF8)];
          items.push(problemAt(at(notUtf8 + 1), NOT_UTF8, ordinal++));
        } else if (table === undefined) {
          const planned = planColumns(record.map((name) => name.trim()), entry, display, context, at);
          if (Array.isArray(planned)) return yield planned;
          table = { entry, plan: planned, coerce: cellReader(planned), context, width: record.length };
        } else if (record.length !== table.width) {
          const ragged = raggedBody(table.width, record.length, delimiterName);
          items.push(problemAt(at(Math.min(record.length, table.width) + 1), ragged, ordinal++));
        } else {
          items.push(rowItem(table, record, ordinal++, at(1)));
        }
      }
      if (items.length > 0) yield items;
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // The parser gave up inside the row after the last one it gave: that row starts on the next line.
    const col = typeof error['column'] === 'number' ? error['column'] + 1 : 1;
    return yield [problemAt({ file: display, line: linesRead + 1, col }, parseErrorBody(error))];
  }
  if (table === undefined) yield [problemAt({ file: display, line: 1, col: 1 }, expectedGot('a header row naming the columns', 'an empty file'))];
}

function raggedBody(width: number, cells: number, delimiterName: string): ProblemBody {
  const hint = `a ${delimiterName} inside a cell splits it${delimiterName === 'comma' ? ': quote such cells ("a, b")' : ''}`;
  return { ...expectedGot(`${width} cells (as the header has)`, `${cells}`), hint };
}

// A stream's async iterator costs a round of promises per record, as much as parsing a small row.
async function* batchesOf(records: Readable): AsyncGenerator<string[][]> {
  for await (const first of records as AsyncIterable<string[]>) {
    const batch = [first];
    for (let next = records.read() as string[] | null; next !== null; next = records.read() as string[] | null) batch.push(next);
    yield batch;
  }
}

function parser(entry: TableEntry): Parser {
  return parse({
    delimiter: entry.kind === 'tsv' ? '\t' : ',',
    bom: true,
    relax_column_count: true,
    // A quote inside an unquoted cell (`5" screen`) is text, as spreadsheets write it.
    relax_quotes: true,
    max_record_size: MAX_RECORD_CHARS,
  });
}

/**
 * A CSV/TSV cell is text; the field's own zod schema says whether it wants a number (a plain
 * decimal: `1e3`, `0x10`, `1,000` stay text), a boolean (any case), a list of text (JSON, or items
 * separated by commas) or other JSON. A cell that does not read so is left as written, for the
 * validator to report at the cell.
 */
export type CellShape = 'text' | 'number' | 'boolean' | 'text-list' | 'json';

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

function unwrapped(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 8; depth++) {
    const def = current.def as { type: string; innerType?: z.ZodType };
    if (def.innerType === undefined || !['optional', 'nullable', 'default', 'readonly', 'nonoptional'].includes(def.type)) break;
    current = def.innerType;
  }
  return current;
}

/** What a field's schema wants from a cell; `text` for a field the row's kind does not have. */
export function cellShape(spec: FieldSpec | undefined): CellShape {
  if (spec === undefined) return 'text';
  const schema = unwrapped(spec.schema);
  const type = schema.def.type;
  if (type === 'number' || type === 'int' || type === 'bigint') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'array') {
    const element = unwrapped((schema.def as unknown as { element: z.ZodType }).element);
    return element.def.type === 'string' ? 'text-list' : 'json';
  }
  if (type === 'object' || type === 'record' || type === 'tuple') return 'json';
  return 'text';
}

function json(cell: string): unknown {
  try {
    return JSON.parse(cell) as unknown;
  } catch {
    return undefined;
  }
}

/** The cell as its field wants it, or unchanged when it does not read that way. */
export function coerceCell(cell: string, shape: CellShape): unknown {
  const trimmed = cell.trim();
  switch (shape) {
    case 'number':
      return DECIMAL.test(trimmed) ? Number(trimmed) : cell;
    case 'boolean': {
      const lower = trimmed.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : cell;
    }
    case 'text-list': {
      if (trimmed.startsWith('[')) {
        const list = json(trimmed);
        return Array.isArray(list) ? list : cell;
      }
      return trimmed.split(',').map((item) => item.trim()).filter((item) => item !== '');
    }
    case 'json': {
      if (!/^[[{]/.test(trimmed)) return cell;
      return json(trimmed) ?? cell;
    }
    default:
      return cell;
  }
}
