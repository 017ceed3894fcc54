import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { JOB_TYPES } from '../../src/jobs/index.js';
import { jobFieldNames, TOP_LEVEL_EXPECTED } from '../../src/manifest/fields.js';
import { BEGIN, END, fieldTables } from './manifest-fields.js';

const DOC = 'docs/manifest.md';
const REGENERATE = 'MEDIABATCH_WRITE_DOCS=1 npx vitest run test/docs/manifest-doc.test.ts';

/** The generated part of the page, markers included; the page's own words around it are left alone. */
function generatedPart(text: string): { before: string; part: string; after: string } {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${DOC} has lost its markers for the generated field tables: ${BEGIN} … ${END}`);
  return { before: text.slice(0, start), part: text.slice(start, end + END.length), after: text.slice(end + END.length) };
}

describe(DOC, () => {
  test('its field tables are the ones the registry of job kinds makes', async () => {
    const generated = fieldTables();
    // The one sanctioned way to refresh the tables: a person asks for it explicitly.
    if (process.env['MEDIABATCH_WRITE_DOCS'] === '1') {
      const { before, after } = generatedPart(await readFile(DOC, 'utf8'));
      await writeFile(DOC, `${before}${generated}${after}`);
    }
    const { part } = generatedPart(await readFile(DOC, 'utf8'));
    expect(part, `${DOC}'s field tables are out of date; regenerate them with: ${REGENERATE}`).toBe(generated);
  });

  test('names every top-level key and every field of every kind', async () => {
    const text = await readFile(DOC, 'utf8');
    const names = [...Object.keys(TOP_LEVEL_EXPECTED), ...JOB_TYPES.flatMap(jobFieldNames)];
    const missing = [...new Set(names)].filter((name) => !text.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
