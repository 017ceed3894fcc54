import type { MatrixEntry, SourceContext, SourceItem, SourceLocation } from './types.js';
import { assembleRow, BATCH_ROWS, manifestAt, templateProblem, type Filling, type Placeholder } from './rows.js';

/** The next combination, the last list turning fastest; false after the last one. */
function advance(counters: number[], entry: MatrixEntry): boolean {
  for (let j = counters.length - 1; j >= 0; j--) {
    const next = (counters[j] ?? 0) + 1;
    if (next < (entry.lists[j]?.values.length ?? 0)) {
      counters[j] = next;
      return true;
    }
    counters[j] = 0;
  }
  return false;
}

/**
 * One row per combination of the matrix's lists, in the order the lists are written (the first
 * list outermost, the last turning fastest), handed over a thousand at a time; nothing else is held. Located
 * at the entry's `matrix:` in the manifest, each list's value at its own position. Id template
 * placeholders: `{F}` (the value, made id-safe), `{F.index}` (1-based), `{F.stem}` (a path's file
 * name without extension), `{n}`, and the entry's fields.
 */
export async function* readMatrix(entry: MatrixEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  const lists = entry.lists.map((list) => list.field);
  const offered = ['n', ...lists, ...Object.keys(entry.fields)];
  const allowed = (p: Placeholder) => (p.attribute === 'index' ? lists.includes(p.name) : offered.includes(p.name));
  const template = templateProblem(entry, context, offered, allowed);
  if (template !== undefined) return yield [template];
  if (entry.lists.some((list) => list.values.length === 0)) return;
  const at = manifestAt(context, ['matrix']);
  const counters = entry.lists.map(() => 0);
  const listIndex = new Map(entry.lists.map((list, j) => [list.field, j]));
  let ordinal = 0;
  let items: SourceItem[] = [];
  do {
    const picked = [...counters];
    const fields: Record<string, unknown> = { ...entry.fields };
    entry.lists.forEach((list, j) => {
      fields[list.field] = list.values[picked[j] ?? 0];
    });
    const ownAt = (field: string): SourceLocation | undefined => {
      const j = listIndex.get(field);
      return j === undefined ? undefined : manifestAt(context, ['matrix', field, picked[j] ?? 0]);
    };
    const fill = (p: Placeholder): Filling | undefined => {
      const j = listIndex.get(p.name);
      return j === undefined ? undefined : { value: fields[p.name], index: (picked[j] ?? 0) + 1 };
    };
    items.push(assembleRow({ ordinal, entry, context, fields, at, ownAt, fill }));
    ordinal += 1;
    if (items.length === BATCH_ROWS) {
      yield items;
      items = [];
    }
  } while (advance(counters, entry));
  if (items.length > 0) yield items;
}
