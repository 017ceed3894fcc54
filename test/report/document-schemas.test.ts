import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { DOCUMENT_SCHEMAS, documentJsonSchema, SCHEMAS_DIR, type DocumentName } from '../../src/report/document-schemas.js';

const REGENERATE = 'MEDIABATCH_WRITE_SCHEMA=1 npx vitest run test/report/document-schemas.test.ts';

describe('the committed JSON Schemas of the documents', () => {
  test.each(Object.keys(DOCUMENT_SCHEMAS) as DocumentName[])(`${SCHEMAS_DIR}/%s.schema.json equals the one generated from its zod schema`, async (name) => {
    const file = `${SCHEMAS_DIR}/${name}.schema.json`;
    const generated = `${JSON.stringify(documentJsonSchema(name), null, 2)}\n`;
    // The one sanctioned way to refresh the files: a person asks for it explicitly.
    if (process.env['MEDIABATCH_WRITE_SCHEMA'] === '1') await writeFile(file, generated);
    expect(await readFile(file, 'utf8'), `${file} is out of date; regenerate it with: ${REGENERATE}`).toBe(generated);
  });

  test('every document requires schema_version 1 and closes its objects', () => {
    for (const name of Object.keys(DOCUMENT_SCHEMAS) as DocumentName[]) {
      const schema = documentJsonSchema(name) as { properties?: Record<string, unknown>; anyOf?: { properties: Record<string, unknown>; additionalProperties: unknown }[]; additionalProperties?: unknown };
      for (const branch of schema.anyOf ?? [schema]) {
        expect(branch.properties?.['schema_version'], name).toMatchObject({ const: 1 });
        expect(branch.additionalProperties, name).toBe(false);
      }
    }
  });
});
