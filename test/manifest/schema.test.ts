import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { describe, expect, test } from 'vitest';
import { manifestJsonSchema } from '../../src/manifest/schema.js';

/** Every example manifest in manifests/. */
const EXAMPLES = readdirSync('manifests').filter((name) => name.endsWith('.yaml')).map((name) => name.replace(/\.yaml$/, ''));

// That the committed file is the one generated: test/generated.test.ts.
describe('the JSON Schema', () => {
  test('rejects unknown keys and requires version and jobs, inline or from sources', () => {
    const schema = manifestJsonSchema() as { additionalProperties?: unknown; required?: unknown; allOf?: unknown[] };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['version']);
    expect(schema.allOf?.[0]).toEqual({ if: { not: { required: ['sources'] } }, then: { required: ['jobs'], properties: { jobs: { minItems: 1 } } } });
  });

  test('every example manifest points its editor at the schema', async () => {
    for (const name of EXAMPLES) {
      const text = await readFile(`manifests/${name}.yaml`, 'utf8');
      expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./mediabatch.schema.json');
      expect(parseDocument(text).errors).toEqual([]);
    }
  });
});
