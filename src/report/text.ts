const CODES = {
  bold: [1, 22],
  red: [31, 39],
  yellow: [33, 39],
} as const;

/** Terminal text in a style; with `enabled` false the text is returned unchanged. */
export function paint(enabled: boolean, style: keyof typeof CODES, text: string): string {
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
}

/** Columns padded to their widest cell (measured before any colour), two spaces apart, indented by two. */
export function renderTable(options: TableOptions): string {
  const all = options.headers === undefined ? options.rows : [options.headers, ...options.rows];
  const columns = Math.max(0, ...all.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, col) => Math.max(...all.map((row) => [...(row[col] ?? '')].length)));
  const line = (row: string[]): string =>
    '  ' +
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
