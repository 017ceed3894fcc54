import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { usdToMicro } from '../../src/money.js';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

const FAST = { pendingMs: { txt2audio: 20, img2video: 50 }, processingMs: { txt2audio: 60, img2video: 150 } };

describe('mediabatch run against the simulator', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });

  const against = (args: string[]) => [...args, '--base-url', sim.url, '--plan', 'unlimited'];
  /** The built CLI: the path a user takes, once. */
  const cli = (args: string[]) => runCli(against(args), { env: { MEDIABATCH_TOKEN: sim.token } });
  /**
   * The CLI's main in this process: the same exit codes and texts, without a start-up each; its
   * runs poll at the simulator's pace (the spawn above keeps the service's).
   */
  const main = (args: string[]) =>
    mainInProcess([...against(args), ...(args[0] === 'run' ? ['--poll-ms', '50'] : [])], { MEDIABATCH_TOKEN: sim.token });

  it('runs every job to a verified file, and a second run sends nothing', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 12, budget: 5 });
    const first = await cli(['run', manifest, '--json']);
    expect(first.stderr).not.toMatch(/Error:|at .*\.js/);
    expect(first.code).toBe(0);
    // As estimate does, the run says where its reports and review page are.
    const reports = ['run.json', 'run.csv', 'report.html'].map((ext) => path.join(dir, `batch.${ext}`));
    expect(first.stderr).toContain(`reports written: ${reports[0]}, ${reports[1]} and the review page ${reports[2]}\n`);
    for (const file of reports) expect(existsSync(file)).toBe(true);
    const summary = JSON.parse(first.stdout) as { counts: Record<string, number>; jobs: { output: string; state: string }[] };
    expect(summary.counts.done).toBe(12);
    for (const job of summary.jobs) {
      expect(job.state).toBe('done');
      expect(readFileSync(job.output).subarray(0, 4).toString()).toBe('RIFF');
    }
    expect(readdirSync(path.join(dir, 'batch.out')).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect(sim.stats.accepted.length).toBe(12);

    const second = await main(['run', manifest, '--json']);
    expect(second.code).toBe(0);
    expect(sim.stats.accepted.length).toBe(12);
    expect(sim.stats.duplicates()).toEqual([]);
    expect(existsSync(path.join(dir, 'batch.run.json'))).toBe(true);
    // The run's CSV says which model each job used and where its price came from.
    const csv = readFileSync(path.join(dir, 'batch.run.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('id,type,model,state,price_usd,price_source,request_id,output,error,tags,retryable,refunded,in_manifest');
    expect(csv).toHaveLength(13);
    for (const line of csv.slice(1)) expect(line).toMatch(/^line-\d{5},txt2audio,Kokoro,done,0\.\d+,(quoted|derived|cached),[^,]+,[^,]+\.wav,,,,,yes$/);
  });

  it('refuses a run over budget with exit 3 and sends nothing; --partial sends the prefix that fits', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 10 });
    const estimate = await main(['estimate', manifest, '--json']);
    expect(estimate.code).toBe(0);
    const report = JSON.parse(estimate.stdout) as { total: number; jobs: { price: number }[] };
    // The ledger counts each price in whole micro-dollars, rounded up (the simulator quotes finer).
    const budget = (report.jobs.slice(0, 4).reduce((s, j) => s + usdToMicro(j.price, 'up'), 0) / 1e6) * 1.000001;

    const refused = await main(['run', manifest, '--budget', String(budget)]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/would be exceeded by \$/);
    expect(refused.stderr).toMatch(/4 of them fit/);
    expect(hasStackTrace(refused.stderr)).toBe(false);
    expect(sim.stats.accepted.length).toBe(0);

    const partial = await main(['run', manifest, '--budget', String(budget), '--partial', '--json']);
    expect(partial.code).toBe(1);
    const summary = JSON.parse(partial.stdout) as { counts: Record<string, number>; spent: number };
    expect(summary.counts.done).toBe(4);
    expect(summary.counts.skipped).toBe(6);
    expect(summary.spent).toBeLessThanOrEqual(budget);
    expect(sim.stats.accepted.length).toBe(4);

    // The cap counts earlier runs: the same budget sends nothing more.
    const again = await main(['run', manifest, '--budget', String(budget), '--partial', '--json']);
    expect(sim.stats.accepted.length).toBe(4);
    expect((JSON.parse(again.stdout) as { counts: Record<string, number> }).counts.skipped).toBe(6);
  });

  it('a wrong token stops with one line and exit 4', async () => {
    sim = await workspace.startSim({ ...FAST });
    const manifest = await writeTtsManifest(dir, { jobs: 2 });
    const result = await mainInProcess(['run', manifest, '--base-url', sim.url], { MEDIABATCH_TOKEN: 'wrong' });
    expect(result.code).toBe(4);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toContain('wrong');
    expect(sim.stats.accepted.length).toBe(0);
  });
});
