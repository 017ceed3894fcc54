import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MediabatchError } from '../../src/errors.js';
import { microToUsd, sumMicro } from '../../src/money.js';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { estimateInProcess, runInProcessResult } from '../helpers/in-process.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { ledgerRows } from '../reliability/helpers.js';
import { forward, startScripted, type Scripted } from '../security/servers.js';

/** A service whose prices can rise between an estimate and a run: the simulator, every price × `factor`. */
async function startRepricingProxy(sim: Simulator): Promise<Scripted & { prices: { factor: number }; priceCalls: () => number }> {
  const state = { factor: 1 };
  let priceCalls = 0;
  const proxy = await startScripted(async (req) => {
    const reply = await forward(sim.url, req);
    if (!req.url.includes('/price-calculation')) return reply;
    priceCalls += 1;
    const doc = JSON.parse(reply.body.toString()) as { data: { price: number } };
    doc.data.price = Math.round(doc.data.price * state.factor * 1e8) / 1e8;
    return { status: reply.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) };
  });
  return { ...proxy, prices: state, priceCalls: () => priceCalls };
}

/** Two price groups (two voices) of several lengths each, and one video group. */
async function writeManifest(dir: string): Promise<string> {
  const lines = [
    'version: 1',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }',
    'jobs:',
  ];
  for (let i = 0; i < 12; i += 1) {
    const voice = i % 2 === 0 ? 'af_sky' : 'am_adam';
    lines.push(`  - { id: line-${i}, type: txt2audio, voice: ${voice}, text: "Line ${i} ${'word '.repeat(i * 3 + 1).trim()}." }`);
  }
  const file = path.join(dir, 'prices.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('prices cached by an estimate are confirmed before a run spends', () => {
  const workspace = useWorkspace();
  let proxy: (Scripted & { prices: { factor: number }; priceCalls: () => number }) | undefined;
  let sim: Simulator;
  let manifest: string;

  beforeEach(async () => {
    sim = await workspace.startSim({ pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    proxy = await startRepricingProxy(sim);
    manifest = await writeManifest(workspace.dir);
  });
  afterEach(async () => {
    await proxy?.close();
  });

  const cli = (args: string[]) =>
    runCli([...args, '--base-url', proxy!.url, '--plan', 'unlimited', ...(args[0] === 'run' ? ['--poll-ms', '50'] : [])], {
      env: { MEDIABATCH_TOKEN: sim.token },
    });
  // The runner's entry points in this process, through the proxy; the CLI only for exit codes and wording.
  const ledgerPath = () => path.join(workspace.dir, 'prices.mediabatch.db');
  const estimateHere = () => estimateInProcess({ manifest, ledgerPath: ledgerPath(), baseUrl: proxy!.url, token: sim.token });
  const runHere = (budgetMicro?: number) =>
    runInProcessResult({ manifest, ledgerPath: ledgerPath(), outDir: path.join(workspace.dir, 'prices.out'), baseUrl: proxy!.url, token: sim.token, budgetMicro });

  it('a price that rose ×10 since the estimate: the run re-prices, refuses over the budget and sends nothing', async () => {
    const first = await estimateHere();
    const total = first.report.totalMicro;

    // A second estimate is free, and says how old its prices are.
    const callsBefore = proxy!.priceCalls();
    const second = await mainInProcess(['estimate', manifest, '--base-url', proxy!.url, '--plan', 'unlimited'], { MEDIABATCH_TOKEN: sim.token });
    expect(second.code, second.stderr).toBe(0);
    expect(proxy!.priceCalls()).toBe(callsBefore);
    expect(second.stdout).toMatch(/Cached prices are up to (a minute|\d+ min) old; run checks each price group with one fresh call/);

    proxy!.prices.factor = 10;
    const run = await cli(['run', manifest, '--budget', String(microToUsd(total * 3))]);
    expect(run.code, run.stderr).toBe(3);
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(run.stderr).toMatch(/the service's price changed since it was cached \(Kokoro: \$[\d.]+ → \$[\d.]+ for one job\)/);
    expect(run.stderr).toMatch(/budget of \$[\d.]+ would be exceeded/);
    expect(sim.stats.accepted).toHaveLength(0);

    // The ledger holds today's prices now: a run with room for them sends every job at them.
    const paid = await runHere(total * 11);
    expect(paid.result.outcome?.execute.fatal).toBeUndefined();
    expect(paid.result.summary.counts.done).toBe(12);
    expect(sim.stats.accepted).toHaveLength(12);
    // Today's prices, as the service quotes them (the cache holds them now), are ten times the first…
    const today = await estimateHere();
    // Each rounded up to a micro-dollar: ten times the first price, give or take those roundings.
    for (const [i, job] of today.jobs.entries()) expect(Math.abs(job.priceMicro - 10 * (first.jobs[i]?.priceMicro ?? 0))).toBeLessThanOrEqual(10);
    // …and the ledger spent exactly those, each in whole micro-dollars rounded up: never short.
    expect(paid.result.summary.spentMicro).toBe(sumMicro(today.jobs.map((job) => job.priceMicro)));
  });

  it('prices that did not change cost one confirming call per price group, and the run goes ahead', async () => {
    await estimateHere();
    const callsBefore = proxy!.priceCalls();
    const { events, result } = await runHere();
    expect(result.outcome?.execute.fatal).toBeUndefined();
    // Two voices: two groups, one call each; nothing re-priced.
    expect(proxy!.priceCalls() - callsBefore).toBe(2);
    expect(events.filter((e) => e.kind === 'warning' && /price changed/.test(e.message))).toEqual([]);
    expect((await ledgerRows(ledgerPath())).every((row) => row.state === 'done')).toBe(true);
  });
});

describe('a price the service cannot mean', () => {
  const workspace = useWorkspace();
  let proxy: Scripted | undefined;
  afterEach(async () => {
    await proxy?.close();
  });

  async function badPriceService(price: unknown): Promise<{ sim: Simulator; proxy: Scripted; manifest: string }> {
    const sim = await workspace.startSim({});
    proxy = await startScripted(async (req) => {
      if (!req.url.includes('/price-calculation')) return forward(sim.url, req);
      return { status: 200, body: JSON.stringify({ data: { price } }) };
    });
    return { sim, proxy, manifest: await writeManifest(workspace.dir) };
  }
  const PRICE_REFUSED = /the price endpoint answered \S+ for txt2audio Kokoro af_sky en-us 1 wav 24000 chars=\d+; expected a price above \$0 and at most \$1000 a job/;

  it.each([
    ['0', 0],
    ['negative', -0.5],
    ['absurd', 1e308],
    ['numeric text', '1e308'],
  ])('%s: estimate and run end in a clear error (exit 4), nothing is sent', async (_name, price) => {
    const { sim, proxy, manifest } = await badPriceService(price);
    const service = { manifest, ledgerPath: path.join(workspace.dir, 'prices.mediabatch.db'), baseUrl: proxy.url, token: sim.token };
    for (const attempt of [estimateInProcess(service), runInProcessResult({ ...service, outDir: path.join(workspace.dir, 'prices.out') })]) {
      const error = await attempt.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(MediabatchError);
      expect((error as MediabatchError).exitCode).toBe(4);
      expect((error as MediabatchError).message).toMatch(PRICE_REFUSED);
      expect((error as MediabatchError).message).not.toContain('Infinity');
    }
    expect(sim.stats.accepted).toHaveLength(0);
  });

  it('the CLI says so on stderr, without a stack trace, and exits 4 for estimate and run', async () => {
    const { sim, proxy, manifest } = await badPriceService(1e308);
    const args = (command: string) => [command, manifest, '--base-url', proxy.url, '--plan', 'unlimited'];
    // The CLI's main in this process: its words and exit code (connection.test.ts shows an exit 4 through a process).
    for (const command of ['estimate', 'run']) {
      const result = await mainInProcess(args(command), { MEDIABATCH_TOKEN: sim.token });
      expect(result.code, result.stderr).toBe(4);
      expect(hasStackTrace(result.stderr)).toBe(false);
      expect(result.stderr).toMatch(PRICE_REFUSED);
      expect(result.stderr).not.toContain('Infinity');
    }
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
