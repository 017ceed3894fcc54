import { describe, expect, test } from 'vitest';
import { IdSet } from '../../src/manifest/ids.js';

describe('IdSet', () => {
  test('200,000 distinct ids are each new; each again, in another case, answers the first id and where it was', () => {
    const ids = new IdSet();
    const count = 200_000;
    const idAt = (i: number): string => `Row-${i}`;
    let added = 0;
    for (let i = 0; i < count; i += 1) if (ids.add(idAt(i), { file: i % 2 === 0 ? 'a.csv' : 'm.yaml', line: i + 2, col: 1 }) === undefined) added += 1;
    expect(added).toBe(count);
    for (let i = 0; i < count; i += 997) {
      expect(ids.add(idAt(i).toLowerCase(), { file: 'b.csv', line: 1, col: 1 })).toEqual({ id: idAt(i), origin: `${i % 2 === 0 ? 'a.csv' : 'm.yaml'}:${i + 2}:1` });
    }
    // A duplicate is not recorded: the first holder still answers.
    expect(ids.add('ROW-0', { file: 'c.csv', line: 9, col: 9 })).toEqual({ id: 'Row-0', origin: 'a.csv:2:1' });
  });

  test('ids that share a hash, or differ only outside A–Z, are different ids', () => {
    const ids = new IdSet();
    // These two have the same FNV-1a hash: only their characters tell them apart.
    expect(ids.add('j1vl8', { file: 'm.yaml', line: 1, col: 1 })).toBeUndefined();
    expect(ids.add('jipd6', { file: 'm.yaml', line: 2, col: 1 })).toBeUndefined();
    expect(ids.add('JIPD6', { file: 'm.yaml', line: 3, col: 1 })).toEqual({ id: 'jipd6', origin: 'm.yaml:2:1' });
    for (const id of ['a-1', 'a_1', 'a.1', 'A-1x', 'a-']) ids.add(id, { file: 'm.yaml', line: 1, col: 1 });
    expect(ids.add('a@1', { file: 'm.yaml', line: 2, col: 1 })).toBeUndefined();
    expect(ids.add('A-1X', { file: 'm.yaml', line: 3, col: 1 })).toEqual({ id: 'A-1x', origin: 'm.yaml:1:1' });
  });
});
