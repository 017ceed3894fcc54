/**
 * Every file derived from the code (the kinds' registry, the documents' schemas): what
 * `npm run generate` writes and test/generated.test.ts checks is committed as generated, so a
 * kind or a field changes in its module only.
 */
import { readFileSync } from 'node:fs';
import { manifestJsonSchema, SCHEMA_FILE } from '../src/manifest/schema.js';
import { DOCUMENT_SCHEMAS, documentJsonSchema, SCHEMAS_DIR, type DocumentName } from '../src/report/document-schemas.js';
import { BEGIN, END, fieldTables, KINDS_BEGIN, KINDS_END, kindsTable } from './manifest-fields.js';

export interface GeneratedFile {
  path: string;
  text: string;
}

const MANIFEST_DOC = 'docs/manifest.md';

const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The page with its generated part (markers included) replaced; the words around it are the page's own. */
function withGenerated(file: string, [begin, end]: readonly [string, string], part: string): string {
  const page = readFileSync(file, 'utf8');
  const start = page.indexOf(begin);
  const stop = page.indexOf(end);
  if (start === -1 || stop < start) throw new Error(`${file} has lost its markers for the generated part: ${begin} … ${end}`);
  return `${page.slice(0, start)}${part}${page.slice(stop + end.length)}`;
}

/** Paths are relative to the repository's root, the working directory of the script and the tests. */
export function generatedFiles(): GeneratedFile[] {
  return [
    { path: SCHEMA_FILE, text: jsonText(manifestJsonSchema()) },
    ...(Object.keys(DOCUMENT_SCHEMAS) as DocumentName[]).map((name) => ({ path: `${SCHEMAS_DIR}/${name}.schema.json`, text: jsonText(documentJsonSchema(name)) })),
    { path: MANIFEST_DOC, text: withGenerated(MANIFEST_DOC, [BEGIN, END], fieldTables()) },
    { path: 'README.md', text: withGenerated('README.md', [KINDS_BEGIN, KINDS_END], kindsTable()) },
  ];
}
