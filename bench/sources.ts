/**
 * Sources at scale (issue 13): a generated CSV source and a JSON Lines one of txt2audio jobs,
 * validated, estimated and run through the built CLI against the simulator in this process. Each
 * figure is printed beside its goal. Row counts: BENCH_SOURCE_ROWS (a comma list, default
 * "100000,1000000"); `run --no-wait` for JSON Lines only at the smallest count (CSV at every one).
 * `validateOnly` (BENCH_ONLY=validate) measures the bare read and validate alone.
 */
import { createReadStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { BATCH_ROWS } from '../src/manifest/read.js';
import { startSimulator } from '../src/sim/index.js';
import { openSqliteLedger, type JobSpec } from '../src/store/index.js';
import { benchText, VOICES, writeLines } from './jobs.js';
import { fmt, measureCli, type Measured } from './measure.js';

const GOAL_RSS_MB = 256;
/** validate reads and checks every row and records nothing; estimate also records every job in its ledger. */
const GOAL_RATIO = { validate: 8, estimate: 3 };
const GOAL_STATUS_MS = 3000;
const GOAL_RESUME_MS = 10_000;

type Format = 'csv' | 'jsonl';

export interface SourceFigures {
  rows: number;
  format: Format;
  bareReadMs: number;
  /** Recording the same jobs, already resolved, through the ledger's ingest (CSV only), as estimate does. */
  ledgerFloorMs?: number;
  validate: Measured & { ratio: number };
  estimate?: Measured & { ratio: number };
  run?: Measured & { submitted: number };
  status?: Measured;
  resume?: Measured;
}

const DEFAULTS = '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }';

/** Writes `rows` jobs as a CSV or a JSON Lines file, and a manifest whose one source is it. */
async function writeSource(dir: string, rows: number, format: Format): Promise<{ manifest: string; data: string }> {
  const data = path.join(dir, `rows-${rows}.${format}`);
  const header = format === 'csv' ? 'id,text,voice\n' : '';
  await writeLines(data, header, { from: 0, to: rows - 1 }, (i) => {
    const voice = VOICES[i % VOICES.length] ?? 'af_sky';
    return format === 'csv' ? `r${i},${benchText(i)},${voice}\n` : `${JSON.stringify({ id: `r${i}`, text: benchText(i), voice })}\n`;
  });
  const manifest = path.join(dir, `${format}-${rows}.yaml`);
  await writeFile(manifest, ['version: 1', 'defaults:', DEFAULTS, 'sources:', `  - ${format}: ${path.basename(data)}`, '    type: txt2audio', ''].join('\n'));
  return { manifest, data };
}

/** The floor: the same file read by csv-parse (or split into lines and JSON.parse'd), nothing else. */
async function bareRead(data: string, format: Format): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  let rows = 0;
  if (format === 'csv') {
    for await (const _row of createReadStream(data).pipe(parse({ columns: true }))) rows += 1;
  } else {
    for await (const line of createInterface({ input: createReadStream(data), crlfDelay: Infinity })) if (line !== '' && JSON.parse(line) !== null) rows += 1;
  }
  return { ms: performance.now() - started, rows };
}

const UNIT = 'source:1';

/**
 * The second floor: the same jobs, already resolved (no reading, no checks, one short literal
 * each, shaped as the real ingest's), recorded through the ledger's ingest in the reader's
 * batches, in the read-write mode estimate and run use. A command that streams a source through
 * the ledger cannot take less than the bare read plus this.
 */
async function ledgerFloor(dir: string, rows: number): Promise<number> {
  const db = path.join(dir, `floor-${rows}.mediabatch.db`);
  const ledger = await openSqliteLedger(db, { mode: 'read-write' });
  try {
    const started = performance.now();
    const session = await ledger.beginIngest();
    for (let start = 0; start < rows; start += BATCH_ROWS) {
      const specs: JobSpec[] = [];
      for (let i = start; i < Math.min(rows, start + BATCH_ROWS); i += 1) {
        const text = benchText(i);
        const voice = VOICES[i % VOICES.length] ?? 'af_sky';
        const priced = `v1|txt2audio|Kokoro|${voice}|en-us|1|mp3|24000`;
        specs.push({
          id: `r${i}`,
          index: 2 ** 32 + i,
          contentHash: (i * 2654435761).toString(16).padStart(64, '0'),
          type: 'txt2audio',
          paramsJson: `{"model":"Kokoro","voice":"${voice}","lang":"en-us","speed":1,"format":"mp3","sample_rate":24000}`,
          textChars: text.length,
          text,
          origin: `rows-${rows}.csv:${i + 2}:1`,
          groupKey: priced,
          priceKey: `${priced}|chars=${text.length}`,
        });
      }
      await session.put(UNIT, specs);
    }
    await session.commit([{ key: UNIT, position: 1, fingerprint: 'floor' }]);
    return performance.now() - started;
  } finally {
    await ledger.close();
    for (const suffix of ['', '-wal', '-shm']) await rm(db + suffix, { force: true });
  }
}

export async function sourcesBench(dir: string, rowCounts: readonly number[], options: { validateOnly?: boolean } = {}): Promise<SourceFigures[]> {
  const figures: SourceFigures[] = [];
  const sim = await startSimulator({ plan: 'unlimited', pendingMs: { txt2audio: 0 }, processingMs: { txt2audio: 0 } });
  const env = { ...process.env, MEDIABATCH_TOKEN: sim.token, NO_COLOR: '1' };
  const service = ['--base-url', sim.url, '--plan', 'unlimited'];
  try {
    for (const rows of rowCounts) {
      for (const format of ['csv', 'jsonl'] as const) {
        const { manifest, data } = await writeSource(dir, rows, format);
        const bare = await bareRead(data, format);
        if (bare.rows !== rows) throw new Error(`the bare read found ${bare.rows} rows, not ${rows}`);
        const validate = await measureCli(['validate', manifest, '--offline'], env);
        const figure: SourceFigures = { rows, format, bareReadMs: bare.ms, validate: { ...validate, ratio: validate.wallMs / bare.ms } };
        if (!options.validateOnly) {
          const estimate = await measureCli(['estimate', manifest, ...service], env);
          figure.estimate = { ...estimate, ratio: estimate.wallMs / bare.ms };
          if (format === 'csv') figure.ledgerFloorMs = await ledgerFloor(dir, rows);
        }
        if (!options.validateOnly && (format === 'csv' || rows === Math.min(...rowCounts))) {
          const before = sim.stats.accepted.length;
          const run = await measureCli(['run', manifest, ...service, '--no-wait', '--concurrency', '8'], env);
          figure.run = { ...run, submitted: sim.stats.accepted.length - before };
          figure.status = await measureCli(['status', manifest], env);
          figure.resume = await measureCli(['run', manifest, ...service, '--no-wait', '--concurrency', '8'], env);
        }
        figures.push(figure);
        await rm(path.join(dir, `${format}-${rows}.mediabatch.db`), { force: true });
        await rm(data, { force: true });
      }
    }
  } finally {
    await sim.close();
  }
  return figures;
}

function goal(ok: boolean): string {
  return ok ? 'ok' : 'MISSED';
}

/** Rows for the printed table: each figure beside its goal, then memory per job across sizes. */
export function formatSourceFigures(figures: readonly SourceFigures[]): [string, string][] {
  const rows: [string, string][] = [];
  for (const f of figures) {
    const label = `${f.format.toUpperCase()} ${f.rows.toLocaleString('en-US')} rows`;
    rows.push([`${label}: bare read`, `${fmt(f.bareReadMs)} ms (${f.format === 'csv' ? 'csv-parse' : 'lines + JSON.parse'}, in process)`]);
    if (f.ledgerFloorMs !== undefined) {
      const floor = `${((f.bareReadMs + f.ledgerFloorMs) / f.bareReadMs).toFixed(2)}×`;
      rows.push([
        `${label}: recording them, resolved`,
        `ledger ingest in process, nothing read or checked: ${fmt(f.ledgerFloorMs)} ms; bare read + recording = ${floor} bare, the least estimate can take`,
      ]);
    }
    for (const [name, m, goalRatio] of [['validate --offline', f.validate, GOAL_RATIO.validate], ['estimate', f.estimate, GOAL_RATIO.estimate]] as const) {
      if (m === undefined) continue;
      rows.push([
        `${label}: ${name}`,
        `${fmt(m.wallMs)} ms = ${m.ratio.toFixed(2)}× bare (goal ≤ ${goalRatio}×: ${goal(m.ratio <= goalRatio)}), peak RSS ${fmt(m.peakRssMb)} MB (goal ≤ ${GOAL_RSS_MB}: ${goal(m.peakRssMb <= GOAL_RSS_MB)}), exit ${m.code}`,
      ]);
    }
    if (f.run !== undefined && f.status !== undefined && f.resume !== undefined) {
      const rate = f.run.submitted / (f.run.wallMs / 1000);
      rows.push([`${label}: run --no-wait`, `${fmt(f.run.wallMs)} ms, ${f.run.submitted} submitted (${fmt(rate)} jobs/s), peak RSS ${fmt(f.run.peakRssMb)} MB (goal ≤ ${GOAL_RSS_MB}: ${goal(f.run.peakRssMb <= GOAL_RSS_MB)}), exit ${f.run.code}`]);
      rows.push([`${label}: status`, `${fmt(f.status.wallMs)} ms (goal ≤ ${GOAL_STATUS_MS}: ${goal(f.status.wallMs <= GOAL_STATUS_MS)}), exit ${f.status.code}`]);
      rows.push([`${label}: run again, all sent`, `${fmt(f.resume.wallMs)} ms (goal ≤ ${GOAL_RESUME_MS}: ${goal(f.resume.wallMs <= GOAL_RESUME_MS)}), exit ${f.resume.code}`]);
    }
  }
  for (const format of ['csv', 'jsonl'] as const) {
    const sized = figures.filter((f) => f.format === format).sort((a, b) => a.rows - b.rows);
    const [small, large] = [sized[0], sized.at(-1)];
    if (small === undefined || large === undefined || small === large) continue;
    const perJob = (pick: (f: SourceFigures) => number | undefined): string => {
      const [a, b] = [pick(small), pick(large)];
      return a === undefined || b === undefined ? '-' : `${(((b - a) * 2 ** 20) / (large.rows - small.rows)).toFixed(1)} B`;
    };
    rows.push([
      `${format.toUpperCase()}: memory per job, ${small.rows.toLocaleString('en-US')} → ${large.rows.toLocaleString('en-US')}`,
      `validate ${perJob((f) => f.validate.peakRssMb)}, estimate ${perJob((f) => f.estimate?.peakRssMb)}, run ${perJob((f) => f.run?.peakRssMb)} (flat: a few bytes at most)`,
    ]);
  }
  return rows;
}
