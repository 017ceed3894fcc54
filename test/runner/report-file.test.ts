import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeReportFile } from '../../src/runner/report-file.js';
import { tempDir } from '../helpers/cli.js';

/** Above the kernel's largest pid (2^22): no process can have it. */
const DEAD_PID = 4_194_305;

describe('writeReportFile', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-report-file-'));
  });
  afterEach(async () => {
    await cleanup();
  });

  it("removes what a killed writer of the same file left, and nothing a live writer or another file owns", async () => {
    const left = {
      // A writer killed mid-way (SIGKILL), under this version's name and the page's old one.
      deadPart: `batch.run.json.${DEAD_PID}.part`,
      deadPartial: `batch.run.json.${DEAD_PID}.partial`,
      // The parent of this test is alive: it may be writing the file right now.
      livePart: `batch.run.json.${process.ppid}.part`,
      otherFile: `batch.run.csv.${DEAD_PID}.part`,
      notDebris: 'batch.run.json.notes.part',
    };
    for (const name of Object.values(left)) writeFileSync(path.join(dir, name), 'half a document');

    await writeReportFile(path.join(dir, 'batch.run.json'), (async function* () {
      yield '{"schema_version":1,';
      yield '"jobs":[]}\n';
    })());

    expect(readFileSync(path.join(dir, 'batch.run.json'), 'utf8')).toBe('{"schema_version":1,"jobs":[]}\n');
    expect(readdirSync(dir).sort()).toEqual(['batch.run.json', left.livePart, left.otherFile, left.notDebris].sort());
    expect(existsSync(path.join(dir, left.deadPart))).toBe(false);
  });
});
