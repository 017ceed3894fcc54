import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { afterEach, expect, test } from 'vitest';
import { fileScope } from '../../../src/manifest/files.js';
import { readSourceBatches } from '../../../src/manifest/read.js';
import { parseSourceEntry } from '../../../src/manifest/sources/entry.js';
import type { SourceEntry } from '../../../src/manifest/sources/types.js';
import { firstEntry, folderWith, MANIFEST, readSource, removeFolders } from './helpers.js';

afterEach(removeFolders);

const ROWS = 100_000;
const ENTRY = 'version: 1\nsources:\n  - csv: big.csv\n    type: txt2audio\n    id: "line-{n}"\n';

function entryOf(): { entry: SourceEntry; locate: ReturnType<typeof firstEntry>['locate'] } {
  const { raw, locate } = firstEntry(ENTRY);
  const { entry } = parseSourceEntry(raw, { manifestFile: MANIFEST, locate });
  if (entry === undefined) throw new Error('the entry must be valid');
  return { entry, locate };
}

async function writeBigCsv(path: string): Promise<void> {
  const out = createWriteStream(path);
  out.write('text,voice,speed\n');
  const CHUNK_ROWS = 10_000;
  for (let start = 0; start < ROWS; start += CHUNK_ROWS) {
    let chunk = '';
    for (let i = start; i < start + CHUNK_ROWS; i++) chunk += `"Line ${i}, spoken once.",af_sky,1.${i % 10}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}

test('a 100,000-row CSV streams through: every row, read a chunk at a time, never the whole file first', async () => {
  const dir = await folderWith({});
  const path = join(dir, 'big.csv');
  await writeBigCsv(path);
  const size = (await stat(path)).size;
  const { entry, locate } = entryOf();
  const input = createReadStream(path);
  const batches = readSourceBatches(entry, { manifestFile: MANIFEST, manifestDir: dir, scope: await fileScope(dir, false), locate, input });
  let count = 0;
  let problems = 0;
  let largestBatch = 0;
  let bytesAtThousand = -1;
  let last: Record<string, unknown> | undefined;
  for await (const batch of batches) {
    largestBatch = Math.max(largestBatch, batch.length);
    for (const item of batch) {
      if (item.problem !== undefined) problems += 1;
      count += 1;
      if (count === 1000) bytesAtThousand = input.bytesRead;
      last = item.row?.fields;
    }
  }
  expect(problems).toBe(0);
  expect(count).toBe(ROWS);
  expect(last).toEqual({ type: 'txt2audio', id: `line-${ROWS}`, text: `Line ${ROWS - 1}, spoken once.`, voice: 'af_sky', speed: 1.9 });
  // A reader that loaded the file (or every row) before yielding would have read all of it by now.
  expect(bytesAtThousand).toBeGreaterThan(0);
  expect(bytesAtThousand).toBeLessThan(size / 10);
  // A batch is what one chunk of the file held (64 KB: about 2,000 of these rows), never the file.
  expect(largestBatch).toBeGreaterThan(1);
  expect(largestBatch).toBeLessThan(10_000);
});

test('the first row arrives before the input has ended', async () => {
  const dir = await folderWith({});
  const { entry, locate } = entryOf();
  let produced = 0;
  // An input that never ends on its own: a reader that waited for the end would wait forever.
  const input = new Readable({
    read() {
      this.push(produced === 0 ? 'text\n' : `row ${produced}\n`);
      produced += 1;
    },
  });
  const rows = readSource(entry, { manifestFile: MANIFEST, manifestDir: dir, scope: await fileScope(dir, false), locate, input });
  const first = await rows.next();
  expect(first.value?.row?.fields['text']).toBe('row 1');
  await rows.return(undefined);
  // Stopping early closes the input (on the next turn, as streams tear down).
  await new Promise((resolve) => setImmediate(resolve));
  expect(input.destroyed).toBe(true);
});
