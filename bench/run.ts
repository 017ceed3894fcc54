/**
 * `npm run bench`: the figures issue 6 asks for, printed as a table and written to
 * bench/results.json with a description of the machine. Never part of `npm test`.
 *
 * Every figure comes from a real run: the built CLI as a child process (as users run it)
 * against the simulator in this process over loopback, with no latency and no rate limit
 * unless said otherwise. The review page is measured in headless Chromium (bench/review-page.ts):
 * BENCH_REVIEW_JOBS synthetic jobs, 100,000 unless said otherwise. BENCH_ONLY=sources runs only
 * the sources at scale, BENCH_ONLY=validate only their bare read and validate (printed, not written),
 * BENCH_ONLY=pace only the mixed-class runs against the plans' pace (printed, not written).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startSimulator } from '../src/sim/index.js';
import { bareUndiciSubmits } from './bare-undici.js';
import { benchManifest, writeLargeManifest } from './manifest-bench.js';
import { fmt, measureCli, ROOT } from './measure.js';
import { formatMixedFigures, mixedClassesRun, type MixedFigures } from './mixed-classes.js';
import { pacedRun } from './paced.js';
import { formatPipelineFigures, pipelineBench } from './pipeline.js';
import { formatReviewPageFigures, reviewPageBench } from './review-page.js';
import { formatSourceFigures, sourcesBench } from './sources.js';
import { cliEnv, CONCURRENCY, submitPhaseMs, writeManifest } from './submits.js';
import { webhookFlood } from './webhook-flood.js';
import { webhookStatusCalls } from './webhooks.js';

const JOBS = Number(process.env['BENCH_JOBS'] ?? 10_000);
const REVIEW_JOBS = Number(process.env['BENCH_REVIEW_JOBS'] ?? 100_000);
/** Row counts of the sources bench; BENCH_SOURCE_ROWS= (empty) leaves it out. */
const SOURCE_ROWS = (process.env['BENCH_SOURCE_ROWS'] ?? '100000,1000000').split(',').filter((n) => n.trim() !== '').map(Number);
/** Jobs of the two-step pipeline (half images, half videos of them). */
const PIPELINE_JOBS = Number(process.env['BENCH_PIPELINE_JOBS'] ?? 100_000);

/** The sources at scale alone (or only their validate), printed. */
async function sourcesOnly(validateOnly: boolean): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-bench-'));
  try {
    printRows(formatSourceFigures(await sourcesBench(dir, SOURCE_ROWS, { validateOnly })));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Speech, images and video side by side: Premium at its real minute, Basic (under its daily caps) at a scaled one. */
async function mixedClasses(dir: string): Promise<{ premium: MixedFigures; basic: MixedFigures }> {
  const premium = await mixedClassesRun(dir, 'premium', 100, 60_000);
  const basic = await mixedClassesRun(dir, 'basic', 15, 1_000);
  return { premium, basic };
}

async function pipelineOnly(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-bench-'));
  try {
    printRows(formatPipelineFigures(await pipelineBench(dir, PIPELINE_JOBS)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function paceOnly(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-bench-'));
  try {
    const { premium, basic } = await mixedClasses(dir);
    printRows([formatMixedFigures(premium), formatMixedFigures(basic)]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function printRows(rows: readonly [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`${rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`);
}

async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY'];
  if (only === 'sources' || only === 'validate') return sourcesOnly(only === 'validate');
  if (only === 'pace') return paceOnly();
  if (only === 'pipeline') return pipelineOnly();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-bench-'));
  const results: Record<string, unknown> = {};
  const rows: [string, string][] = [];
  try {
    // (f) first: it needs headless Chromium, and a machine without it should say so before the long runs.
    const review = await reviewPageBench(REVIEW_JOBS);
    results['reviewPage'] = review;
    rows.push(...formatReviewPageFigures(review));

    const manifest = await writeManifest(dir, JOBS);
    const sim = await startSimulator({ plan: 'unlimited', pendingMs: { txt2audio: 0, img2video: 0 }, processingMs: { txt2audio: 0, img2video: 0 } });
    const common = ['--base-url', sim.url, '--plan', 'unlimited', '--concurrency', String(CONCURRENCY)];
    try {
      // (c) estimate, cold then cached.
      const cold = await measureCli(['estimate', manifest, ...common, '--json'], cliEnv(sim));
      const priceCallsCold = sim.stats.calls.price;
      const cached = await measureCli(['estimate', manifest, ...common, '--json'], cliEnv(sim));
      const priceCallsCached = sim.stats.calls.price - priceCallsCold;
      results['estimate'] = { jobs: JOBS, coldMs: cold.wallMs, cachedMs: cached.wallMs, priceCallsCold, priceCallsCached };
      rows.push(['estimate cold', `${fmt(cold.wallMs)} ms, ${priceCallsCold} price calls`]);
      rows.push(['estimate cached', `${fmt(cached.wallMs)} ms, ${priceCallsCached} price calls`]);

      // (a) run --no-wait: every submit, nothing followed.
      const priceBefore = sim.stats.calls.price;
      const run = await measureCli(['run', manifest, ...common, '--no-wait'], cliEnv(sim));
      const submitted = sim.stats.accepted.length;
      const runRate = submitted / (run.wallMs / 1000);
      const phaseMs = submitPhaseMs(sim);
      results['runNoWait'] = {
        jobs: JOBS, submitted, wallMs: run.wallMs, submitPhaseMs: phaseMs, jobsPerSecond: runRate, peakRssMb: run.peakRssMb,
        priceCalls: sim.stats.calls.price - priceBefore, exitCode: run.code, duplicates: sim.stats.duplicates().length,
      };
      rows.push(['run --no-wait', `${fmt(run.wallMs)} ms, ${fmt(runRate)} jobs/s, peak RSS ${fmt(run.peakRssMb)} MB, exit ${run.code}`]);
      rows.push(['  of which submitting', `${fmt(phaseMs)} ms (first to last accepted submit)`]);
      if (submitted !== JOBS) rows.push(['  warning', `only ${submitted} of ${JOBS} accepted: ${run.stderrTail}`]);

      // (d) collect everything, then time a resume with nothing left to do.
      const collect = await measureCli(['run', manifest, ...common], cliEnv(sim));
      const resume = await measureCli(['run', manifest, ...common], cliEnv(sim));
      results['collect'] = { wallMs: collect.wallMs, exitCode: collect.code, peakRssMb: collect.peakRssMb };
      results['resumeFinished'] = { wallMs: resume.wallMs, exitCode: resume.code };
      rows.push(['collect (poll + download)', `${fmt(collect.wallMs)} ms, exit ${collect.code}, peak RSS ${fmt(collect.peakRssMb)} MB`]);
      rows.push(['resume of a finished run', `${fmt(resume.wallMs)} ms, exit ${resume.code}`]);
    } finally {
      await sim.close();
    }

    // (b) the floor: the same submits from a bare undici loop at the same concurrency, in this
    // process and from a child process like the CLI; the faster of the two is the floor.
    const { inProcess, childProcess } = await bareUndiciSubmits(JOBS, CONCURRENCY);
    const bare = inProcess.wallMs <= childProcess.wallMs ? inProcess : childProcess;
    const { wallMs: runMs, submitPhaseMs: phaseMs } = results['runNoWait'] as { wallMs: number; submitPhaseMs: number };
    results['bareUndici'] = { inProcess, childProcess, floorMs: bare.wallMs, ratio: runMs / bare.wallMs, submitPhaseRatio: phaseMs / bare.wallMs };
    rows.push(['bare undici loop, in process', `${fmt(inProcess.wallMs)} ms, ${fmt(inProcess.jobsPerSecond)} jobs/s`]);
    rows.push(['bare undici loop, child process', `${fmt(childProcess.wallMs)} ms, ${fmt(childProcess.jobsPerSecond)} jobs/s`]);
    rows.push(['runner / bare, whole command', `${(runMs / bare.wallMs).toFixed(2)}× (process start, manifest, ledger sync, cached pricing, reports included)`]);
    rows.push(['runner / bare, submit phase', `${(phaseMs / bare.wallMs).toFixed(2)}× (each submit reserved and recorded in the ledger before and after)`]);

    // The manifest alone: validating 10,000 jobs offline, in this process (no CLI start-up).
    const load = await benchManifest(JOBS, 3, path.join(ROOT, 'manifests/images'));
    // The same manifest through the CLI, for its peak memory: reading it is the whole command.
    const large = await writeLargeManifest(path.join(dir, 'large'), JOBS, writeFile, path.join(ROOT, 'manifests/images'));
    const validate = await measureCli(['validate', large, '--offline'], { ...process.env, NO_COLOR: '1' });
    results['manifestLoad'] = { ...load, validateOfflineMs: validate.wallMs, validatePeakRssMb: validate.peakRssMb, validateExitCode: validate.code };
    rows.push(['manifest load (offline checks)', `${fmt(load.firstMs)} ms first, ${fmt(load.medianMs)} ms median of 3`]);
    rows.push(['validate --offline (CLI)', `${fmt(validate.wallMs)} ms, peak RSS ${fmt(validate.peakRssMb)} MB, exit ${validate.code}`]);

    // (e) a paced run against a scaled-down limit.
    const paced = await pacedRun(dir);
    results['paced'] = paced;
    rows.push(['paced run', `${(paced.achievedFraction * 100).toFixed(1)}% of the allowed rate, ${paced.rateLimited} × 429 in ${paced.requests} submits`]);
    const mixed = await mixedClasses(dir);
    results['mixedClasses'] = mixed;
    rows.push(formatMixedFigures(mixed.premium), formatMixedFigures(mixed.basic));

    // (f) one Basic-plan day of speech jobs followed by polling, then by webhooks.
    const hooks = await webhookStatusCalls(path.join(dir, 'webhooks'));
    results['webhooks'] = hooks;
    rows.push([`status calls, ${hooks.jobs} Basic jobs`, `polling ${hooks.polling.statusCalls} (Basic allows ${hooks.statusPerDay}/day), webhooks ${hooks.webhooks.statusCalls}`]);
    // The receiver under 300 hostile connections: its memory, and whether a real delivery still gets in.
    const flood = await webhookFlood();
    results['webhookFlood'] = flood;
    for (const [name, attack] of [['unsigned', flood.unsigned], ['forged signature', flood.forged]] as const) {
      rows.push([`receiver, ${flood.connections} ${name} 1 MiB posts`, `peak RSS +${fmt(attack.peakAboveMb)} MB over its own ${fmt(attack.baselineRssMb)} MB, a real delivery answered ${attack.realDelivery ?? 'nothing'}`]);
    }

    // (g) sources at scale: a CSV and a JSON Lines source of SOURCE_ROWS rows each.
    if (SOURCE_ROWS.length > 0) {
      const sources = await sourcesBench(dir, SOURCE_ROWS);
      results['sources'] = sources;
      rows.push(...formatSourceFigures(sources));
    }

    // (h) a two-step pipeline from a CSV source: every video waits for its own image.
    const pipeline = await pipelineBench(path.join(dir, 'pipeline'), PIPELINE_JOBS);
    results['pipeline'] = pipeline;
    rows.push(...formatPipelineFigures(pipeline));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: os.totalmem() / 2 ** 30, node: process.version, platform: `${os.platform()} ${os.release()}` };
  const out = path.join(ROOT, 'bench/results.json');
  await writeFile(out, `${JSON.stringify({ at: new Date().toISOString(), machine, results }, null, 2)}\n`);
  printRows(rows);
  process.stdout.write(`\nwritten to ${out}\n`);
}


await main();
