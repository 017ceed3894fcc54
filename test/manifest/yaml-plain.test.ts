import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parseDocument } from 'yaml';
import { plainValue } from '../../src/manifest/yaml-plain.js';
import { FIXTURES } from './helpers.js';

// The plain value must be what yaml's own toJS gives, only cheaper: same values, same keys.
const yamlIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.yaml')).map((name) => join(dir, name));
const FILES = [...yamlIn('manifests'), ...yamlIn(`${FIXTURES}/valid`), ...yamlIn(`${FIXTURES}/invalid`), ...yamlIn(`${FIXTURES}/catalogue`)];

const SNIPPETS: Record<string, string> = {
  'scalars of every kind': 'a: 1\nb: 1.5\nc: true\nd: null\ne: ~\nf: "x"\ng: 0x1f\nh: .inf\ni: 12345678901234567890\nj: 2001-12-14\n',
  'empty values and keys': 'a:\nb: []\nc: {}\n? \n: x\n',
  'keys that are not text': '1: a\ntrue: b\nnull: c\n',
  'names an object has already': '__proto__: { polluted: true }\nconstructor: 1\ntoString: 2\nhasOwnProperty: 3\n',
  'a list of pairs': 'a: [b: 1, c: 2]\n',
  'anchors and aliases': 'a: &x { k: [1, 2] }\nb: *x\nc: &y 3\nd: [*y, *y, *x]\n',
  'an anchor set twice': 'a: &x 1\nb: *x\nc: &x 2\nd: *x\n',
  'an alias as a key': 'k: &k voice\nm: { *k : af_sky }\n',
  'tags': 'a: !!str 1\nb: !custom x\nc: !!float 1\n',
  'merge keys': 'a: &a { x: 1, y: 2 }\nb: { <<: *a, y: 3 }\nc: { y: 3, <<: *a }\nd: { <<: [*a, { z: 1 }] }\ne: { "<<": 1 }\nf: &f { <<: *a, w: 0 }\ng: { <<: *f }\n',
  'deep nesting': `a: ${'['.repeat(200)}1${']'.repeat(200)}\n`,
};

test.each(FILES)('%s: the same plain value as yaml toJS', (file) => {
  const doc = parseDocument(readFileSync(file, 'utf8'));
  if (doc.errors.length === 0) expect(plainValue(doc)).toEqual(doc.toJS());
});

test.each(Object.entries(SNIPPETS))('%s: the same plain value as yaml toJS', (_name, text) => {
  const doc = parseDocument(text, { logLevel: 'silent', merge: true });
  expect(doc.errors).toEqual([]);
  const value = plainValue(doc);
  expect(value).toEqual(doc.toJS({ maxAliasCount: -1 }));
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
});

test('an alias shares its anchor’s value instead of copying it', () => {
  const value = plainValue(parseDocument('a: &x { k: [1, 2] }\nb: *x\nc: [*x, *x]\n')) as { a: unknown; b: unknown; c: unknown[] };
  expect(value.b).toBe(value.a);
  expect(value.c[0]).toBe(value.a);
  expect(value.c[1]).toBe(value.a);
});

test('a list or mapping as a key gets a short stand-in: it is never a field name', () => {
  expect(plainValue(parseDocument('[1, 2]: d\n{k: v}: e\n'))).toEqual({ '[…]': 'd', '{…}': 'e' });
});
