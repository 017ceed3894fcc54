/**
 * Pipelines run against the simulator, in this process (what is checked is the runner's doing):
 * each dependent is sent once every input is done, downloaded and checked, while the rest of the
 * batch still runs, and is sent its inputs' exact bytes (the simulator keeps the sha256 of every
 * field it was sent); a dependent priced at the catalogue's bound is priced for real before its
 * submit and the rest of its reservation is free again; a failed input leaves its dependents
 * blocked, and sending it again (`--retries`, a later run, `--redo`) unblocks them; a redone input
 * makes the jobs that took it "changed after it was submitted".
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOB_TYPES } from '../../src/jobs/index.js';
import { sumMicro } from '../../src/money.js';
import type { RunEvent } from '../../src/runner/context.js';
import { pngImage } from '../../src/sim/results.js';
import type { Simulator } from '../../src/sim/index.js';
import { openSqliteLedger, type JobRow } from '../../src/store/index.js';
import { ROOT } from '../helpers/cli.js';
import { estimateInProcess, runInProcessResult, type InProcessRun } from '../helpers/in-process.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { mainAgainst } from '../reliability/helpers.js';
import { forward, startScripted } from '../security/servers.js';
import { eventsFor } from '../support/events.js';
import { startWebhookRun } from '../webhooks/helpers.js';

/** Every kind quick: a job ends about 60 ms after the service takes it. */
const FAST = {
  pendingMs: Object.fromEntries(JOB_TYPES.map((type) => [type, 20])),
  processingMs: Object.fromEntries(JOB_TYPES.map((type) => [type, 40])),
  latencyMs: 2,
  recordSent: true,
};

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** The ledger's jobs by id, read as a report reads them. */
async function rowsOf(ledgerPath: string): Promise<Map<string, JobRow>> {
  const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
  try {
    return new Map((await ledger.readJobs({ scope: 'all', limit: 1000 })).map((row) => [row.id, row]));
  } finally {
    await ledger.close();
  }
}

/** The kinds of a job's events in the ledger's log, oldest first. */
async function eventKinds(ledgerPath: string, id: string): Promise<string[]> {
  const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
  try {
    return (await eventsFor(ledger, id)).map((event) => event.kind);
  } finally {
    await ledger.close();
  }
}

function row(rows: ReadonlyMap<string, JobRow>, id: string): JobRow {
  const found = rows.get(id);
  if (found === undefined) throw new Error(`no job "${id}" in the ledger`);
  return found;
}

/** The sha256 of each field the simulator was sent for a job's (last) request. */
function sentTo(sim: Simulator, job: JobRow): Readonly<Record<string, string>> {
  return sim.stats.sent.get(job.requestId ?? '') ?? {};
}

/** The result file's own bytes: what the ledger says it verified is what is on disk. */
async function resultSha256(job: JobRow): Promise<string> {
  expect(job.state, job.id).toBe('done');
  const sha = sha256(await readFile(job.resultPath ?? ''));
  expect(job.resultSha256, job.id).toBe(sha);
  return sha;
}

/** Each job sent once: as many acceptances as jobs, and every job's request id among them. */
function expectEachSentOnce(sim: Simulator, rows: ReadonlyMap<string, JobRow>): void {
  const accepted = new Set(sim.stats.accepted.map((job) => job.requestId));
  expect(sim.stats.accepted).toHaveLength(rows.size);
  expect(new Set([...rows.values()].map((job) => job.requestId))).toEqual(accepted);
}

const CHAIN_DEFAULTS = [
  'defaults:',
  '  txt2img: { model: Flux1schnell, width: 512, height: 512, guidance: 0, steps: 4, seed: 7 }',
  '  img-rmbg: { model: Ben2 }',
  '  img-upscale: { model: RealESRGAN_x4plus }',
];

/** poster → cutout (its background removed) → cutout-hd (that upscaled). */
async function writeChain(dir: string): Promise<string> {
  const file = path.join(dir, 'chain.yaml');
  const jobs = [
    '  - id: poster',
    '    type: txt2img',
    '    prompt: "a lighthouse at dusk"',
    '  - id: cutout',
    '    type: img-rmbg',
    '    image: { from: poster }',
    '  - id: cutout-hd',
    '    type: img-upscale',
    '    image: { from: cutout }',
  ];
  await writeFile(file, ['version: 1', ...CHAIN_DEFAULTS, 'jobs:', ...jobs, ''].join('\n'));
  return file;
}

describe('pipelines run against the simulator', () => {
  const workspace = useWorkspace();

  function inProcess(sim: Simulator | { url: string; token: string }, manifest: string): InProcessRun {
    const name = path.basename(manifest, '.yaml');
    const dir = path.dirname(manifest);
    return {
      manifest,
      ledgerPath: path.join(dir, `${name}.mediabatch.db`),
      outDir: path.join(dir, `${name}.out`),
      baseUrl: sim.url,
      token: sim.token,
    };
  }

  async function productExample(): Promise<string> {
    const file = path.join(workspace.dir, 'pipeline.yaml');
    await copyFile(path.join(ROOT, 'test/fixtures/manifests/valid/pipeline.yaml'), file);
    return file;
  }

  it('image → video, speech + image → talking video, transcript → speech: each sent once its inputs are done, with their bytes', async () => {
    const manifest = await productExample();
    // The transcript takes long at the service: the jobs that do not need it must not wait for it.
    const transcribingMs = 1500;
    const sim = await workspace.startSim({ ...FAST, processingMs: { ...FAST.processingMs, aud2txt: transcribingMs } });
    const run = inProcess(sim, manifest);
    const { result } = await runInProcessResult(run);
    expect(result.summary.counts).toMatchObject({ done: 6, failed: 0, blocked: 0, in_doubt: 0 });
    const rows = await rowsOf(run.ledgerPath);
    expectEachSentOnce(sim, rows);
    expect(sim.stats.duplicates()).toEqual([]);

    const poster = await resultSha256(row(rows, 'poster'));
    const narration = await resultSha256(row(rows, 'narration'));
    const transcript = await readFile(row(rows, 'interview-transcript').resultPath ?? '', 'utf8');
    expect(sentTo(sim, row(rows, 'poster-moving'))).toMatchObject({ first_frame_image: poster });
    expect(sentTo(sim, row(rows, 'talking-poster'))).toMatchObject({ audio: narration, first_frame_image: poster });
    // A text result feeds a text field: the transcript's text, as it was saved, is what was spoken.
    expect(sentTo(sim, row(rows, 'dubbed'))).toMatchObject({ text: sha256(transcript) });

    // Each dependent was sent after every one of its inputs was done (downloaded and checked).
    const inputsOf: Record<string, Record<string, string>> = {
      'poster-moving': { first_frame_image: 'poster' },
      'talking-poster': { audio: 'narration', first_frame_image: 'poster' },
      dubbed: { text: 'interview-transcript' },
    };
    for (const [dependent, inputs] of Object.entries(inputsOf)) {
      expect(row(rows, dependent).inputs).toEqual(inputs);
      for (const input of Object.values(inputs)) {
        expect(row(rows, dependent).submittedAt! >= row(rows, input).finishedAt!, `${dependent} after ${input}`).toBe(true);
      }
    }
    // No stage barrier: the videos went out while the transcript was still being made.
    const acceptedAt = (id: string): number =>
      sim.stats.accepted.find((job) => job.requestId === row(rows, id).requestId)?.at ?? Number.NaN;
    const transcriptEndsAt = acceptedAt('interview-transcript') + FAST.pendingMs['aud2txt']! + transcribingMs;
    expect(acceptedAt('poster-moving')).toBeLessThan(transcriptEndsAt);
    expect(acceptedAt('talking-poster')).toBeLessThan(transcriptEndsAt);
    expect(row(rows, 'dubbed').step).toBe(2);
  });

  it('reserves the bound, prices the speech for real once the transcript exists, and frees the rest of the budget', async () => {
    const manifest = await productExample();
    const sim = await workspace.startSim(FAST);
    const run = inProcess(sim, manifest);
    const { report, jobs } = await estimateInProcess(run);
    const bound = jobs.find((job) => job.id === 'dubbed')?.priceMicro ?? Number.NaN;
    expect((await rowsOf(run.ledgerPath)).get('dubbed')?.priceBound).toBe(true);

    // A budget of exactly the bound total: enough, and not a micro-dollar more.
    const balanceBefore = sim.balanceUsd;
    const { result } = await runInProcessResult({ ...run, budgetMicro: report.totalMicro });
    expect(result.summary.counts).toMatchObject({ done: 6 });
    const rows = await rowsOf(run.ledgerPath);
    const dubbed = row(rows, 'dubbed');
    expect(dubbed.priceBound).toBe(false);
    // Chatterbox's price law in the simulator (0.77 µUSD a character, × 1.3), on the transcript as sent.
    const transcript = await readFile(row(rows, 'interview-transcript').resultPath ?? '', 'utf8');
    const realUsd = Math.round([...transcript].length * 0.77e-6 * 1.3 * 1e8) / 1e8;
    expect(dubbed.priceMicro).toBe(Math.ceil(realUsd * 1e6 - 1e-3));
    expect(dubbed.priceMicro).toBeLessThan(bound);
    expect(await eventKinds(run.ledgerPath, 'dubbed')).toContain('repriced');

    // What was spent is the real prices; what the service took is the same.
    const released = bound - (dubbed.priceMicro ?? 0);
    expect(result.summary.spentMicro).toBe(sumMicro([...rows.values()].map((job) => job.priceMicro ?? 0)));
    expect(result.summary.spentMicro).toBe(report.totalMicro - released);
    const takenMicro = (balanceBefore - sim.balanceUsd) * 1e6;
    expect(result.summary.spentMicro - takenMicro).toBeGreaterThanOrEqual(-1e-3);
    expect(result.summary.spentMicro - takenMicro).toBeLessThan(rows.size);

    // What the bound held back is free again: under the same budget, one more job that costs less than it is sent.
    const extra = '  - { id: extra, type: txt2audio, text: "One more line, paid with what the bound held back." }';
    await writeFile(manifest, `${await readFile(manifest, 'utf8')}${extra}\n`);
    const again = await runInProcessResult({ ...run, budgetMicro: report.totalMicro });
    expect(again.result.summary.counts).toMatchObject({ done: 7 });
    const extraPrice = row(await rowsOf(run.ledgerPath), 'extra').priceMicro ?? Number.NaN;
    expect(extraPrice).toBeLessThanOrEqual(released);
    expect(again.result.summary.spentMicro).toBeLessThanOrEqual(report.totalMicro);
    expect(sim.stats.accepted).toHaveLength(7);
  });

  it('fans out from a files source: N cut-outs, each upscaled from its own result by a { from: "rmbg-{stem}" } template', async () => {
    const photos = ['harbour', 'lighthouse', 'dunes', 'pier', 'gulls'];
    await mkdir(path.join(workspace.dir, 'photos'));
    // Each photo its own size: its own bytes and its own price.
    for (const [i, name] of photos.entries()) await writeFile(path.join(workspace.dir, 'photos', `${name}.png`), pngImage(64 + 16 * i));
    const manifest = path.join(workspace.dir, 'photos.yaml');
    const sources = [
      'sources:',
      '  - files: photos/*.png',
      '    type: img-rmbg',
      '    field: image',
      '    id: "rmbg-{stem}"',
      '  - files: photos/*.png',
      '    type: img-upscale',
      '    field: image',
      '    id: "up-{stem}"',
      '    image: { from: "rmbg-{stem}" }',
    ];
    await writeFile(manifest, ['version: 1', ...CHAIN_DEFAULTS, ...sources, ''].join('\n'));
    const sim = await workspace.startSim(FAST);
    const run = inProcess(sim, manifest);
    const { report, jobs } = await estimateInProcess(run);
    expect(report.jobs).toBe(2 * photos.length);
    const estimated = await rowsOf(run.ledgerPath);
    for (const name of photos) {
      expect(row(estimated, `rmbg-${name}`).priceBound, name).toBe(false);
      // An upscale is priced by its image's sides, unknown until the cut-out exists: the largest the service takes.
      expect(row(estimated, `up-${name}`).priceBound, name).toBe(true);
      expect(row(estimated, `up-${name}`).inputs).toEqual({ image: `rmbg-${name}` });
    }

    const { result } = await runInProcessResult(run);
    expect(result.summary.counts).toMatchObject({ done: 2 * photos.length, blocked: 0 });
    const rows = await rowsOf(run.ledgerPath);
    expectEachSentOnce(sim, rows);
    for (const name of photos) {
      const photo = sha256(await readFile(path.join(workspace.dir, 'photos', `${name}.png`)));
      expect(sentTo(sim, row(rows, `rmbg-${name}`))).toMatchObject({ image: photo });
      expect(sentTo(sim, row(rows, `up-${name}`))).toMatchObject({ image: await resultSha256(row(rows, `rmbg-${name}`)) });
      const boundMicro = jobs.find((job) => job.id === `up-${name}`)?.priceMicro ?? Number.NaN;
      expect(row(rows, `up-${name}`).priceMicro).toBeLessThan(boundMicro);
    }
    expect(result.summary.spentMicro).toBeLessThan(report.totalMicro);
  });

  it('follows a pipeline by webhooks: each dependent sent on its inputs\' deliveries', async () => {
    const manifest = await productExample();
    const sim = await workspace.startSim(FAST);
    const hooked = await startWebhookRun({ sim, manifest });
    const { summary } = await hooked.done;
    expect(summary.counts).toMatchObject({ done: 6 });
    expect(sim.stats.accepted).toHaveLength(6);
    expect(sim.stats.duplicates()).toEqual([]);
    expect(sim.stats.calls.status).toBe(0);
  });

  it('a failed input leaves its dependents blocked with the reason; a later run sends it again and unblocks them', async () => {
    const manifest = await writeChain(workspace.dir);
    const sim = await workspace.startSim({ ...FAST, jobErrorRate: 1, errorRetryable: true });
    const run = inProcess(sim, manifest);
    const first = await runInProcessResult({ ...run, retryFailed: 0 });
    expect(first.result.summary.counts).toMatchObject({ failed: 1, blocked: 2, done: 0 });
    let rows = await rowsOf(run.ledgerPath);
    expect([...rows.values()].map((job) => [job.id, job.state])).toEqual([
      ['poster', 'failed'],
      ['cutout', 'blocked'],
      ['cutout-hd', 'blocked'],
    ]);
    expect(row(rows, 'cutout').lastError).toContain('"poster"');
    expect(row(rows, 'cutout-hd').lastError).toMatch(/"cutout"|"poster"/);
    // Nothing of the blocked jobs was sent or reserved.
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img']);
    expect([row(rows, 'cutout').spentMicro, row(rows, 'cutout-hd').spentMicro]).toEqual([0, 0]);

    sim.setJobErrorRate(0);
    const second = await runInProcessResult(run);
    expect(second.result.summary.counts).toMatchObject({ done: 3, blocked: 0, failed: 0 });
    rows = await rowsOf(run.ledgerPath);
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-rmbg', 'img-upscale']);
    expect(sim.stats.duplicates()).toEqual([]);
    const kinds = await eventKinds(run.ledgerPath, 'cutout');
    expect(kinds.indexOf('unblocked')).toBeGreaterThan(kinds.indexOf('blocked'));
    expect(kinds.indexOf('blocked')).toBeGreaterThanOrEqual(0);
  });

  it('--retries sends a failed input again within the run, and its dependents follow it', async () => {
    const manifest = await writeChain(workspace.dir);
    const sim = await workspace.startSim({ ...FAST, jobErrorRate: 1, errorRetryable: true });
    // The poster fails once; from then on the service does its work.
    const onEvent = (event: RunEvent): void => {
      if (event.kind === 'failed' && event.id === 'poster') sim.setJobErrorRate(0);
    };
    const { result, events } = await runInProcessResult({ ...inProcess(sim, manifest), retryFailed: 1, onEvent });
    expect(result.summary.counts).toMatchObject({ done: 3, blocked: 0, failed: 0 });
    expect(events).toContainEqual({ kind: 'retry_pass', pass: 1, passes: 1, jobs: 1 });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-rmbg', 'img-upscale']);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('an input failed for good keeps its dependents blocked, listed by status; --redo of it unblocks them', async () => {
    const manifest = await writeChain(workspace.dir);
    const sim = await workspace.startSim({ ...FAST, jobErrorRate: 1, errorRetryable: false });
    const run = inProcess(sim, manifest);
    expect((await runInProcessResult(run)).result.summary.counts).toMatchObject({ failed: 1, blocked: 2 });
    const ids = await mainInProcess(['status', manifest, '--state', 'blocked', '--format', 'ids']);
    expect(ids.code, ids.stderr).toBe(0);
    expect(ids.stdout).toBe('cutout\ncutout-hd\n');

    // A plain run sends nothing: the poster failed for good, so its dependents wait.
    sim.setJobErrorRate(0);
    expect((await runInProcessResult(run)).result.summary.counts).toMatchObject({ failed: 1, blocked: 2 });
    expect(sim.stats.accepted).toHaveLength(1);

    const redone = await runInProcessResult({ ...run, select: { redo: ['poster'] } });
    expect(redone.result.summary.counts).toMatchObject({ done: 3, blocked: 0 });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-rmbg', 'img-upscale']);
  });

  it('an input in doubt (its answer lost) keeps its dependents blocked until --resubmit-in-doubt sends it again', async () => {
    const manifest = await writeChain(workspace.dir);
    // The service takes the poster, then answers 500: whether it was taken, the runner cannot know.
    const sim = await workspace.startSim({ ...FAST, faults: 'submit:500-after=1' });
    const run = inProcess(sim, manifest);
    expect((await runInProcessResult(run)).result.summary.counts).toMatchObject({ in_doubt: 1, blocked: 2 });
    expect(row(await rowsOf(run.ledgerPath), 'cutout').lastError).toContain('"poster"');
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img']);

    sim.setFaults('');
    expect((await runInProcessResult(run)).result.summary.counts).toMatchObject({ in_doubt: 1, blocked: 2 });
    expect(sim.stats.accepted).toHaveLength(1);
    const resubmitted = await mainAgainst(sim, ['run', manifest, '--resubmit-in-doubt']);
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-rmbg', 'img-upscale']);
  });

  it('a redone input whose result changed: the jobs that took it keep theirs, "changed after it was submitted"', async () => {
    const manifest = await writeChain(workspace.dir);
    const sim = await workspace.startSim(FAST);
    const run = inProcess(sim, manifest);
    expect((await runInProcessResult(run)).result.summary.counts).toMatchObject({ done: 3 });

    // In front of the simulator, a service whose new poster differs from the first one.
    const posters = new Set<string>();
    const front = await startScripted(async (req) => {
      if (req.url === '/new-poster.png') return { status: 200, headers: { 'content-type': 'image/png' }, body: pngImage(96) };
      const reply = await forward(sim.url, req);
      if (req.method === 'POST' && req.url === '/api/v1/client/txt2img') {
        posters.add((JSON.parse(reply.body.toString()) as { data: { request_id: string } }).data.request_id);
      }
      const asked = /\/request-status\/([0-9a-f-]{36})/.exec(req.url)?.[1];
      if (asked === undefined || !posters.has(asked)) return reply;
      const doc = JSON.parse(reply.body.toString()) as { data: { status: string; result_url: string | null } };
      if (doc.data.status === 'done') doc.data.result_url = `${front.url}/new-poster.png`;
      return { status: reply.status, body: JSON.stringify(doc) };
    });
    try {
      const through = { ...run, baseUrl: front.url };
      const redo = await runInProcessResult({ ...through, select: { redo: ['poster'] } });
      const next = await runInProcessResult(through);
      const warnings = [...redo.events, ...next.events].flatMap((event) => (event.kind === 'warning' ? [event.message] : []));
      expect(warnings.some((message) => message.startsWith('job "cutout" changed after it was submitted')), warnings.join('\n')).toBe(true);
      expect(next.result.summary.counts).toMatchObject({ done: 3 });
    } finally {
      await front.close();
    }
    // Only the poster was sent again: the cut-outs keep their results.
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'img-rmbg', 'img-upscale', 'txt2img']);
  });
});
