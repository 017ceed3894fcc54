import type * as z from 'zod';
import type { FieldSpec } from '../../jobs/index.js';

/**
 * A CSV/TSV cell is text; a field may want a number, a boolean or a list. The field's own zod
 * schema says which, so a new field needs no rule here. A cell that does not read as what the
 * field wants is left as the text it is, for the validator to report at the cell ("expected a
 * number above 0, got "fast"").
 *
 * - number fields: a plain decimal (`12`, `-3`, `0.75`, `.5`), spaces around allowed; no
 *   exponents, hex, thousands separators or units (`1e3`, `0x10`, `1,000`, `5s` stay text);
 * - boolean fields: `true` / `false`, any case;
 * - lists of text (`tags`): a JSON array (`["a","b"]`), or items separated by commas
 *   (`book, part one` → `["book", "part one"]`, blanks dropped);
 * - other lists and objects (`loras`): JSON (`[{"name":"x","weight":0.8}]`);
 * - everything else (text, slugs, choices, paths): the cell exactly as written.
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

/** The cell as its field wants it, or the cell unchanged when it does not read that way. */
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
