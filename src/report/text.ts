import { escapeControlChars } from '../control-chars.js';
import { decimalUsd, type MicroUsd } from '../money.js';

const CODES = {
  bold: [1, 22],
  red: [31, 39],
  yellow: [33, 39],
} as const;

export type Style = keyof typeof CODES;

/** Terminal text in a style; with `enabled` false the text is returned unchanged. */
export function paint(enabled: boolean, style: Style, text: string): string {
  if (!enabled) return text;
  const [open, close] = CODES[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/** Rows of cells for renderTable (text) and markdownTable; columns without an `align` entry are left-aligned. */
export interface Table {
  /** Omitted for a plain label/value list. */
  headers?: string[];
  rows: string[][];
  align?: ('left' | 'right')[];
}

/** One column of a table of `T`s: its header, its cell, and `right` for numbers and money. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
  right?: boolean;
}

export function tableOf<T>(columns: readonly Column<T>[], rows: readonly T[]): Table {
  return {
    headers: columns.map((column) => column.header),
    rows: rows.map((row) => columns.map((column) => column.cell(row))),
    align: columns.map((column) => (column.right === true ? 'right' : 'left')),
  };
}

/** Columns padded to their widest cell (measured before any colour), two spaces apart, indented by two. */
export function renderTable(table: Table, color: boolean): string {
  const all = table.headers === undefined ? table.rows : [table.headers, ...table.rows];
  const columns = Math.max(0, ...all.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, col) => Math.max(...all.map((row) => [...(row[col] ?? '')].length)));
  const line = (row: string[]): string =>
    '  ' +
    row
      .map((cell, col) => pad(cell, widths[col] ?? 0, table.align?.[col] ?? 'left'))
      .join('  ')
      .trimEnd();
  const body = table.rows.map(line);
  if (table.headers === undefined) return body.join('\n');
  return [paint(color, 'bold', line(table.headers)), ...body].join('\n');
}

function pad(cell: string, width: number, align: 'left' | 'right'): string {
  const fill = ' '.repeat(Math.max(0, width - [...cell].length));
  return align === 'right' ? fill + cell : cell + fill;
}

/** `1,234` for counts in text reports. */
export function formatCount(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * Markdown for a pull request or a finance ticket, with money exact to the micro-dollar
 * (`$0.000077`, `$12.50`). Never a line per job: a ticket cannot hold a million rows, and the CSV
 * files have them.
 */
export function markdownTable({ headers = [], rows, align = [] }: Table): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const rule = headers.map((_, i) => (align[i] === 'right' ? '---:' : '---'));
  return [line(headers.map(markdownCell)), line(rule), ...rows.map((row) => line(row.map(markdownCell)))].join('\n');
}

/** A markdown table cell or title: one line, no `|` to split it, no control character to hide text. */
export function markdownCell(text: string): string {
  return escapeControlChars(text.replace(/\s*\n\s*/g, ' ')).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
}

/** Exact dollars, at least two decimals: `$12.50`, `$0.000077`, `-$0.25`. */
export function exactUsd(micro: MicroUsd): string {
  const text = decimalUsd(Math.abs(micro));
  const [whole, fraction = ''] = text.split('.');
  return `${micro < 0 ? '-' : ''}$${whole}.${fraction.padEnd(2, '0')}`;
}

/** A label, amount table (money in both renderings). */
export const AMOUNTS = { headers: ['', 'amount'], align: ['left', 'right'] } satisfies Omit<Table, 'rows'>;
