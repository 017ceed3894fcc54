import type * as z from 'zod';
import type { FieldSpec } from '../../jobs/index.js';

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
