import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { generatedFiles } from '../scripts/generated.js';

describe('the committed generated files', () => {
  test.each(generatedFiles().map((file) => [file.path, file.text]))('%s is what `npm run generate` writes', async (path, text) => {
    expect(await readFile(path, 'utf8'), `${path} is out of date; run: npm run generate`).toBe(text);
  });
});
