import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { JOB_TYPES } from '../../src/jobs/index.js';
import { jobFieldNames, TOP_LEVEL_EXPECTED } from '../../src/manifest/fields.js';

const DOC = 'docs/manifest.md';

// That its field tables are the generated ones: test/generated.test.ts.
describe(DOC, () => {
  test('names every top-level key and every field of every kind', async () => {
    const text = await readFile(DOC, 'utf8');
    const names = [...Object.keys(TOP_LEVEL_EXPECTED), ...JOB_TYPES.flatMap(jobFieldNames)];
    const missing = [...new Set(names)].filter((name) => !text.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
