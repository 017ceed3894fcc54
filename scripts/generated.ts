/**
 * Every file derived from the code (the kinds' registry, the documents' schemas): what
 * `npm run generate` writes and test/generated.test.ts checks is committed as generated, so a
 * kind or a field changes in its module only.
 */
import { readFileSync } from 'node:fs';
import { manifestJsonSchema, SCHEMA_FILE } from '../src/manifest/schema.js';
import { DOCUMENT_SCHEMAS, documentJsonSchema, SCHEMAS_DIR, type DocumentName } from '../src/report/document-schemas.js';
import { BEGIN, END, fieldTables } from './manifest-fields.js';

export interface GeneratedFile {
  path: string;
  text: string;
}

const MANIFEST_DOC = 'docs/manifest.md';

const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The page with its generated part (markers included) replaced; the words around it are the page's own. */
function withFieldTables(page: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${MANIFEST_DOC} has lost its markers for the generated field tables: ${BEGIN} … ${END}`);
  return `${page.slice(0, start)}${fieldTables()}${page.slice(end + END.length)}`;
}

/** Paths are relative to the repository's root, the working directory of the script and the tests. */
export function generatedFiles(): GeneratedFile[] {
  return [
    { path: SCHEMA_FILE, text: jsonText(manifestJsonSchema()) },
    ...(Object.keys(DOCUMENT_SCHEMAS) as DocumentName[]).map((name) => ({ path: `${SCHEMAS_DIR}/${name}.schema.json`, text: jsonText(documentJsonSchema(name)) })),
    { path: MANIFEST_DOC, text: withFieldTables(readFileSync(MANIFEST_DOC, 'utf8')) },
  ];
}
