import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MediabatchError } from '../../src/errors.js';
import type { Simulator } from '../../src/sim/index.js';
import { CLI, cliEnv, collect, hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { estimateInProcess, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, ledgerRows, mainAgainst, simArgs } from '../reliability/helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { eventsFor } from '../support/events.js';

interface StatusJob {
  id: string;
  state: string;
  price: number;
  output: string | null;
  request_id: string | null;
  retryable: boolean | null;
  refunded: boolean | null;
}

/** Speech jobs with the ids and tags given, beside each other in one manifest. */
async function taggedManifest(dir: string, jobs: Record<string, string[]>): Promise<string> {
  const lines = ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }', 'jobs:'];
  for (const [id, tags] of Object.entries(jobs)) {
    lines.push(`  - { id: ${id}, type: txt2audio, text: "Text of ${id}.", tags: [${tags.join(', ')}] }`);
  }
  const file = path.join(dir, 'book.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

const BOOK = { 'ch-01': ['book', 'en'], 'ch-02': ['book'], 'ch-03': ['book', 'en'], 'ch-10': [], intro: ['promo', 'en'], outro: ['promo'] };

const states = async (dir: string, name = 'book'): Promise<Record<string, string>> =>
  Object.fromEntries((await ledgerRows(path.join(dir, `${name}.mediabatch.db`))).map((row) => [row.id, row.state]));

/** What a refusal says on stderr after "mediabatch: ", for --only, --tag and --redo. */
const PICK_HINT = '(--only takes ids or globs such as "ch-0*", matched case-sensitively against the whole id; --redo takes ids of done or failed jobs)';

describe('run --only, --tag and --redo; status --state and --format ids|jsonl', () => {
  const workspace = useWorkspace();
  /**
   * `run` in this process against `sim`, into the files the CLI would write for `manifest`
   * (`<name>.out`, `<name>.run.json`, …): the runner's picks; the CLI only for flags and wording.
   */
  const runHere = async (sim: Simulator, manifest: string, extra: Partial<InProcessRun> = {}) => {
    const base = manifest.replace(/\.yaml$/, '');
    const files = { db: `${base}.mediabatch.db`, out: `${base}.out`, runJson: `${base}.run.json`, runCsv: `${base}.run.csv`, reportHtml: `${base}.report.html`, legacyReport: `${base}.report.json` };
    return runInProcessResult({ manifest, ledgerPath: files.db, outDir: files.out, files, baseUrl: sim.url, token: sim.token, ...extra });
  };
  const refusal = (attempt: Promise<unknown>): Promise<MediabatchError> =>
    attempt.then(
      () => expect.fail('expected a refusal'),
      (error: unknown) => {
        expect(error).toBeInstanceOf(MediabatchError);
        return error as MediabatchError;
      },
    );

  it('--only with a glob and an exact id sends those jobs alone; the others stay pending', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await taggedManifest(workspace.dir, BOOK);
    // estimate counts what the same picks would send.
    const select = { only: ['ch-0*', 'intro'] };
    const priced = await estimateInProcess({ manifest, ledgerPath: path.join(workspace.dir, 'book.mediabatch.db'), baseUrl: sim.url, token: sim.token, select });
    expect(priced.report.jobsToSend).toBe(4);
    expect(priced.jobs.filter((job) => job.toSend).map((job) => job.id)).toEqual(['ch-01', 'ch-02', 'ch-03', 'intro']);
    const { result } = await runHere(sim, manifest, { select });
    // Every job picked is done: the run is judged on them.
    expect(result.picked).toEqual({ jobs: 4, done: 4 });
    expect(await states(workspace.dir)).toEqual({ 'ch-01': 'done', 'ch-02': 'done', 'ch-03': 'done', 'ch-10': 'pending', intro: 'done', outro: 'pending' });
    expect(sim.stats.accepted).toHaveLength(4);
    expect(existsSync(path.join(workspace.dir, 'book.out', 'ch-10.wav'))).toBe(false);
  });

  it('--tag picks the jobs carrying any of the tags, and with --only a job must match both', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await taggedManifest(workspace.dir, BOOK);
    const { result } = await runHere(sim, manifest, { select: { tags: ['en', 'promo'], only: ['ch-*', 'outro'] } });
    expect(result.picked).toEqual({ jobs: 3, done: 3 });
    expect(await states(workspace.dir)).toEqual({ 'ch-01': 'done', 'ch-02': 'pending', 'ch-03': 'done', 'ch-10': 'pending', intro: 'pending', outro: 'done' });
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('a pattern or tag that matches no job, or a bad --state, is refused with exit 2 and nothing is priced or sent', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await taggedManifest(workspace.dir, BOOK);
    const result = await refusal(runHere(sim, manifest, { select: { only: ['ch-0*', 'Intro', 'x?'], tags: ['fr'] } }));
    expect(result.exitCode).toBe(2);
    expect(result.message).toBe(
      '--only "Intro" matches no job of the manifest; --only "x?" matches no job of the manifest; --tag "fr": no job of the manifest carries this tag. ' +
        `Nothing was sent. ${PICK_HINT}`,
    );
    expect(sim.stats.calls.submit).toBe(0);
    expect(sim.stats.calls.price).toBe(0);
    expect(Object.values(await states(workspace.dir)).every((state) => state === 'pending')).toBe(true);

    const empty = await mainAgainst(sim, ['run', manifest, '--only', 'ch-01,']);
    expect(empty.code).toBe(2);
    expect(empty.stderr.trim()).toBe('mediabatch: --only: expected an id or a glob such as "ch-0*", got an empty value (or an empty item of a comma list)');

    const badState = await mainInProcess(['status', manifest, '--state', 'failed,in-doubt']);
    expect(badState.code).toBe(2);
    expect(badState.stderr.trim()).toBe(
      'mediabatch: --state: expected job states, comma-separated, from pending, submitting, submitted, done, failed, in_doubt, skipped, blocked; got "in-doubt" (as in --state failed,in_doubt)',
    );
    const md = await mainInProcess(['status', manifest, '--state', 'failed', '--format', 'md']);
    expect(md.code).toBe(2);
    expect(md.stderr.trim()).toBe(
      'mediabatch: --state lists jobs, and --format md is the summary for a ticket, without a list: use --format csv (or table, ids, jsonl, json) with --state',
    );
    expect(hasStackTrace(empty.stderr + badState.stderr + md.stderr)).toBe(false);
  });

  it('--redo generates a done job again: a new file beside the old, both paid for, the old path in the log; a pending job is refused', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await taggedManifest(workspace.dir, { a: [], b: [], c: [] });
    expect((await runHere(sim, manifest, { select: { only: ['a', 'b'] } })).result.picked).toEqual({ jobs: 2, done: 2 });
    const first = (await ledgerRows(path.join(workspace.dir, 'book.mediabatch.db'))).find((row) => row.id === 'a')!;
    const refused = await mainAgainst(sim, ['run', manifest, '--redo', 'c']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      `mediabatch: --redo "c": the job is pending, not done or failed (a run sends it as it is). Nothing was sent. ${PICK_HINT}`,
    );
    expect(sim.stats.accepted).toHaveLength(2);

    const redo = await runHere(sim, manifest, { select: { redo: ['a'], only: ['a', 'b'] } });
    expect(redo.result.picked).toEqual({ jobs: 2, done: 2 });
    const out = path.join(workspace.dir, 'book.out');
    const doc = JSON.parse(readFileSync(path.join(workspace.dir, 'book.run.json'), 'utf8')) as { spent: number; jobs: StatusJob[] };
    const a = doc.jobs.find((job) => job.id === 'a')!;
    const b = doc.jobs.find((job) => job.id === 'b')!;
    expect(first.result_path).toBe(path.join(out, 'a.wav'));
    expect(a).toMatchObject({ state: 'done', output: path.join(out, 'a~2.wav') });
    // The simulator answers every speech job with the same bytes: both files are kept all the same.
    expect(readFileSync(path.join(out, 'a~2.wav'))).toEqual(readFileSync(path.join(out, 'a.wav')));
    expect(doc.spent).toBeCloseTo(2 * a.price + b.price, 9);
    expect(await states(workspace.dir)).toEqual({ a: 'done', b: 'done', c: 'pending' });
    // The one job the service took twice is the one asked for, under its old and its new request id.
    expect(sim.stats.duplicates()).toEqual([{ fingerprint: expect.any(String), requestIds: [first.request_id, a.request_id] }]);

    const ledger = await openSqliteLedger(path.join(workspace.dir, 'book.mediabatch.db'), { mode: 'read-only' });
    try {
      const events = await eventsFor(ledger, 'a');
      expect(events.filter((e) => e.kind === 'done').map((e) => (e.detail as { path: string }).path)).toEqual([first.result_path, a.output]);
      expect(events.find((e) => e.fromState === 'done')).toMatchObject({ kind: 'reserved', toState: 'submitting', detail: { earlierResult: { path: first.result_path } } });
    } finally {
      await ledger.close();
    }
  });

  it('--redo with --partial over the budget: the run says the done jobs it did not send stay done, as status counts them', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await taggedManifest(workspace.dir, { a: [], b: [], c: [] });
    expect((await runHere(sim, manifest)).result.summary.counts.done).toBe(3);
    const runJson = path.join(workspace.dir, 'book.run.json');
    const doc = JSON.parse(readFileSync(runJson, 'utf8')) as { spent: number; jobs: StatusJob[] };
    // Room for one redo more than what is spent.
    const budget = (doc.spent + doc.jobs[0]!.price).toFixed(6);
    const redo = await mainAgainst(sim, ['run', manifest, '--redo', 'a,b,c', '--partial', '--budget', budget]);
    expect(redo.code, redo.stderr).toBe(0);
    expect(redo.stderr).toContain('not sent 2 job(s) that stay done, failed or in doubt: over budget (--partial)');
    expect(redo.stderr).not.toMatch(/skipped +2 job\(s\)/);
    // The run's own document, as status --json reads the ledger.
    const status = JSON.parse(readFileSync(runJson, 'utf8')) as { counts: Record<string, number> };
    expect(status.counts).toMatchObject({ done: 3, skipped: 0 });
    expect(sim.stats.accepted).toHaveLength(4);
  });

  it('status --state failed --format ids piped into run --only sends those again and nothing else; jsonl lists the document\'s jobs', async () => {
    const sim = await workspace.startSim({ ...FAST, jobErrorRate: 0.5, errorRetryable: true, seed: 5 });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 12 });
    const db = path.join(workspace.dir, 'batch.mediabatch.db');
    // One submit at a time: the simulator's outcomes follow its seed in the order jobs are taken.
    const first = await runHere(sim, manifest, { select: { only: ['line-0000*'] }, retryFailed: 0, concurrency: 1 });
    expect(first.result.picked?.done).toBeLessThan(10);
    const failed = (await ledgerRows(db)).filter((row) => row.state === 'failed').map((row) => row.id);
    expect(failed.length).toBeGreaterThan(0);

    const ids = await mainInProcess(['status', manifest, '--state', 'failed', '--format', 'ids']);
    expect(ids.code, ids.stderr).toBe(0);
    expect(ids.stdout).toBe(failed.map((id) => `${id}\n`).join(''));

    const table = await mainInProcess(['status', manifest, '--state', 'failed']);
    expect(table.stdout).toContain(`\nJobs failed: ${failed.length}\n`);
    for (const id of failed) expect(table.stdout).toMatch(new RegExp(`\\n  ${id} +txt2audio +failed +\\S`));

    // The run's document: what status --json prints of the same ledger.
    const json = JSON.parse(readFileSync(path.join(workspace.dir, 'batch.run.json'), 'utf8')) as { jobs: StatusJob[] };
    // Failed stays failed, with what the service said of it.
    expect(json.jobs.filter((job) => job.state === 'failed').map((job) => [job.id, job.retryable, job.refunded])).toEqual(failed.map((id) => [id, true, true]));
    expect(json.jobs.filter((job) => job.state === 'done').every((job) => job.retryable === null && job.refunded === null)).toBe(true);
    // The run's CSV and its review page say the same of each failure.
    const csv = readFileSync(path.join(workspace.dir, 'batch.run.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0]).toMatch(/,error,tags,retryable,refunded,in_manifest$/);
    for (const id of failed) expect(csv.find((line) => line.startsWith(`${id},`))).toMatch(/,failed,.*,yes,yes,yes$/);
    expect(csv.filter((line) => line.includes(',done,')).every((line) => line.endsWith(',,,yes'))).toBe(true);
    const page = readFileSync(path.join(workspace.dir, 'batch.report.html'), 'utf8');
    expect(page.match(/ \(retryable, refunded: a later run sends it again\)"/g)).toHaveLength(failed.length);
    const lines = await mainInProcess(['status', manifest, '--state', 'failed,pending', '--format', 'jsonl']);
    expect(lines.code).toBe(0);
    expect(lines.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(json.jobs.filter((job) => job.state === 'failed' || job.state === 'pending'));

    // As docs/reports.md shows it: the ids, joined by commas, given to --only.
    const command = `node "${CLI}" run "${manifest}" --only "$(node "${CLI}" status "${manifest}" --state failed --format ids | paste -sd, -)" --retries 0 ${simArgs(sim).join(' ')}`;
    const piped = await collect(spawn('sh', ['-c', command], { env: cliEnv({ MEDIABATCH_TOKEN: sim.token }), stdio: ['ignore', 'pipe', 'pipe'] }));
    expect([0, 1], piped.stderr).toContain(piped.code);
    expect(sim.stats.accepted).toHaveLength(10 + failed.length);
    const after = Object.fromEntries((await ledgerRows(db)).map((row) => [row.id, row.state]));
    expect([after['line-00010'], after['line-00011']]).toEqual(['pending', 'pending']);
    expect(sim.stats.duplicates()).toEqual([]);
  });
});
