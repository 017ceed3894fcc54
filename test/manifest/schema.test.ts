import { readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { describe, expect, test } from 'vitest';
import { manifestJsonSchema, SCHEMA_FILE } from '../../src/manifest/schema.js';

/** Every example manifest in manifests/. */
const EXAMPLES = readdirSync('manifests').filter((name) => name.endsWith('.yaml')).map((name) => name.replace(/\.yaml$/, ''));

const REGENERATE = 'MEDIABATCH_WRITE_SCHEMA=1 npx vitest run test/manifest/schema.test.ts';

describe('the committed JSON Schema', () => {
  test(`${SCHEMA_FILE} equals manifestJsonSchema()`, async () => {
    const generated = `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
    // The one sanctioned way to refresh the file: a person asks for it explicitly.
    if (process.env['MEDIABATCH_WRITE_SCHEMA'] === '1') await writeFile(SCHEMA_FILE, generated);
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    expect(committed, `${SCHEMA_FILE} is out of date; regenerate it with: ${REGENERATE}`).toBe(generated);
  });

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
