/** Styles for terminal text; with `enabled` false the text is returned unchanged. */
export type Style = 'bold' | 'dim' | 'red' | 'yellow' | 'green';

const CODES: Record<Style, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  yellow: [33, 39],
  green: [32, 39],
};

export function paint(enabled: boolean, style: Style, text: string): string {
  if (!enabled) return text;
  const [open, close] = CODES[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

export interface TableOptions {
  /** Omitted for a plain label/value list. */
  headers?: string[];
  rows: string[][];
  /** Per column; columns without an entry are left-aligned. */
  align?: ('left' | 'right')[];
  color: boolean;
  indent?: string;
}

/** Columns padded to their widest cell (measured before any colour), two spaces apart. */
export function renderTable(options: TableOptions): string {
  const all = options.headers === undefined ? options.rows : [options.headers, ...options.rows];
  const columns = Math.max(0, ...all.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, col) => Math.max(...all.map((row) => [...(row[col] ?? '')].length)));
  const indent = options.indent ?? '  ';
  const line = (row: string[]): string =>
    indent +
    row
      .map((cell, col) => pad(cell, widths[col] ?? 0, options.align?.[col] ?? 'left'))
      .join('  ')
      .trimEnd();
  const body = options.rows.map(line);
  if (options.headers === undefined) return body.join('\n');
  return [paint(options.color, 'bold', line(options.headers)), ...body].join('\n');
}

function pad(cell: string, width: number, align: 'left' | 'right'): string {
  const fill = ' '.repeat(Math.max(0, width - [...cell].length));
  return align === 'right' ? fill + cell : cell + fill;
}

/** `1,234` for counts in text reports. */
export function formatCount(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
