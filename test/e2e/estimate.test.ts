import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { microToUsd, sumMicro, usdToMicro } from '../../src/money.js';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { estimateInProcess } from '../helpers/in-process.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';

const VOICES = ['af_sky', 'af_bella', 'am_adam'] as const;

interface TtsJob {
  id: string;
  voice: string;
  text: string;
}

/** `count` jobs, every text different, lengths spread by `wordsFor`, voices taking turns. */
function ttsJobs(count: number, wordsFor: (i: number) => number): TtsJob[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `job-${String(i).padStart(5, '0')}`,
    voice: VOICES[i % VOICES.length]!,
    text: `Job ${i} says ${Array.from({ length: wordsFor(i) }, (_, w) => `w${(i * 7 + w) % 1000}`).join(' ')}.`,
  }));
}

async function writeManifest(dir: string, jobs: readonly TtsJob[], name = 'big.yaml'): Promise<string> {
  const lines = [
    'version: 1',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
    'jobs:',
  ];
  for (const job of jobs) lines.push(`  - id: ${job.id}`, '    type: txt2audio', `    voice: ${job.voice}`, `    text: "${job.text}"`);
  const file = path.join(dir, name);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** The simulator's price laws (src/sim/pricing.ts, src/sim/kinds/) for Kokoro (price factor 1) at speed 1. */
const round8 = (usd: number) => Math.round(usd * 1e8) / 1e8;
const linearQuote = (text: string) => round8([...text].length * 0.77e-6);
const minimumQuote = (text: string) => round8(Math.max(0.0005, [...text].length * 0.77e-6));

interface EstimateJson {
  total: number;
  spent: number;
  budget: number | null;
  withinBudget: boolean;
  priceCalls: number;
  jobs: { id: string; type: string; model: string; price: number; priceSource: 'quoted' | 'derived' | 'cached' }[];
  byModel: Record<string, { jobs: number; total: number }>;
}

describe('mediabatch estimate', () => {
  const workspace = useWorkspace();
  let sim: Simulator | undefined;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });

  const cli = (args: string[]) =>
    runCli([...args, '--base-url', sim!.url, '--plan', 'unlimited'], { env: { MEDIABATCH_TOKEN: sim!.token } });

  it('prices 1,200 different texts in 3 groups with few calls, exactly; cached the second time; over budget exits 3', async () => {
    sim = await workspace.startSim();
    // 180 (voice, length) pairs against at most 12 calls already shows the grouping; how long
    // many thousands of jobs take is the bench's concern, not a behaviour.
    const JOBS = 1_200;
    const jobs = ttsJobs(JOBS, (i) => (i % 60) + 1);
    const manifest = await writeManifest(dir, jobs);
    const exact = new Map(jobs.map((j) => [j.id, linearQuote(j.text)]));
    // Each price as the tool counts money: whole micro-dollars, rounded up (never short).
    const counted = new Map([...exact].map(([id, usd]) => [id, usdToMicro(usd, 'up')]));

    const first = await cli(['estimate', manifest, '--json']);
    expect(hasStackTrace(first.stderr)).toBe(false);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as EstimateJson;
    expect(sim.stats.calls.price).toBeLessThanOrEqual(12);
    expect(report.priceCalls).toBe(sim.stats.calls.price);
    expect(sim.stats.calls.submit).toBe(0);
    expect(report).toMatchObject({ spent: 0, budget: null, withinBudget: true });
    expect(report.jobs).toHaveLength(JOBS);
    for (const job of report.jobs) {
      expect(job).toMatchObject({ type: 'txt2audio', model: 'Kokoro' });
      expect(['quoted', 'derived']).toContain(job.priceSource);
      expect(job.price, job.id).toBe(microToUsd(counted.get(job.id)!));
    }
    expect(report.jobs.some((j) => j.priceSource === 'derived')).toBe(true);
    expect(report.total).toBe(microToUsd(sumMicro(counted.values())));
    expect(report.byModel).toEqual({ Kokoro: { jobs: JOBS, total: report.total } });

    // The law above is what the simulator's price endpoint answers, asked directly.
    for (const job of [jobs[0]!, jobs[431]!, jobs[JOBS - 1]!]) {
      const answer = await fetch(`${sim.url}/api/v1/client/txt2audio/price-calculation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sim.token}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({ text: job.text, model: 'Kokoro', voice: job.voice, lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 }),
      });
      expect(((await answer.json()) as { data: { price: number } }).data.price).toBe(exact.get(job.id));
    }

    // Reports beside the manifest.
    const reportFile = path.join(dir, 'big.estimate.json');
    expect((JSON.parse(readFileSync(reportFile, 'utf8')) as EstimateJson).total).toBe(report.total);
    const csv = readFileSync(path.join(dir, 'big.estimate.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toMatch(/^id,type,model,.*price_usd,price_source/);
    expect(csv).toHaveLength(JOBS + 1);

    // Again: every price comes from the ledger's cache (the runner's estimate, in-process).
    const callsBefore = sim.stats.calls.price;
    const cached = await estimateInProcess({ manifest, ledgerPath: path.join(dir, 'big.mediabatch.db'), baseUrl: sim.url, token: sim.token });
    expect(sim.stats.calls.price).toBe(callsBefore);
    expect(cached.report.priceCalls).toBe(0);
    expect(cached.jobs.every((j) => j.source === 'cached')).toBe(true);
    expect(microToUsd(cached.report.totalMicro)).toBe(report.total);

    // Over budget: exit 3, by how much, and how many jobs fit (in manifest order).
    const budget = 0.1;
    const budgetMicro = usdToMicro(budget, 'down');
    let fit = 0;
    for (let sum = 0; fit < jobs.length && sum + counted.get(jobs[fit]!.id)! <= budgetMicro; fit += 1) sum += counted.get(jobs[fit]!.id)!;
    // The CLI's main in this process: a spawn of `run` shows exit 3 through a process (stale-prices.test.ts).
    const over = await mainInProcess(['estimate', manifest, '--budget', String(budget), '--base-url', sim.url, '--plan', 'unlimited'], { MEDIABATCH_TOKEN: sim.token });
    expect(over.code).toBe(3);
    expect(hasStackTrace(over.stderr)).toBe(false);
    expect(sim.stats.calls.price).toBe(callsBefore);
    // Money in the text report is shown to 3 significant digits.
    const overBy = Number(/Over budget by \$([\d.]+)\./.exec(over.stdout)?.[1]);
    expect(overBy).toBeCloseTo(report.total - budget, 2);
    expect(over.stdout).toContain(`the first ${fit.toLocaleString('en-US')} of ${JOBS.toLocaleString('en-US')} jobs to send fit`);
    expect(over.stdout).not.toContain('about under');
    expect(sim.stats.calls.submit).toBe(0);
  });

  it("under the simulator's 'minimum' pricing every price is quoted and the total is exact", async () => {
    sim = await workspace.startSim({ pricing: 'minimum' });
    // Lengths from ~20 to ~1,600 characters: below and above the $0.0005 minimum (~650 characters).
    const jobs = ttsJobs(90, (i) => 3 + i * 3);
    const manifest = await writeManifest(dir, jobs, 'minimum.yaml');
    // The pricing is the runner's: in-process (the CLI's document and files are the test above's).
    const { report, jobs: priced } = await estimateInProcess({ manifest, ledgerPath: path.join(dir, 'minimum.mediabatch.db'), baseUrl: sim.url, token: sim.token });
    expect(priced).toHaveLength(jobs.length);
    expect(priced.every((j) => j.source === 'quoted')).toBe(true);
    const counted = new Map(jobs.map((j) => [j.id, usdToMicro(minimumQuote(j.text), 'up')]));
    for (const job of priced) expect(job.priceMicro, job.id).toBe(counted.get(job.id));
    expect(report.totalMicro).toBe(sumMicro(counted.values()));
    expect(report.priceCalls).toBe(sim.stats.calls.price);
    // Still at most one call per distinct length, plus the probes.
    expect(sim.stats.calls.price).toBeLessThanOrEqual(new Set(jobs.map((j) => `${j.voice}|${j.text.length}`)).size + 3 * 4);
  });
});
