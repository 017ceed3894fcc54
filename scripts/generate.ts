/** `npm run generate`: writes every derived file (scripts/generated.ts) that differs from what the code makes. */
import { readFileSync, writeFileSync } from 'node:fs';
import { generatedFiles } from './generated.js';

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

let written = 0;
for (const { path, text } of generatedFiles()) {
  if (read(path) === text) continue;
  writeFileSync(path, text);
  console.log(`wrote ${path}`);
  written++;
}
console.log(written === 0 ? 'every generated file is up to date' : `${written} file(s) written; commit them with the change that made them`);
