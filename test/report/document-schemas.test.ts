import { describe, expect, test } from 'vitest';
import { DOCUMENT_SCHEMAS, documentJsonSchema, type DocumentName } from '../../src/report/document-schemas.js';

// That the committed files are the ones generated: test/generated.test.ts.
describe('the JSON Schemas of the documents', () => {
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
