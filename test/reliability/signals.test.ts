import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, startCli } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { forward, startScripted, type Scripted } from '../security/servers.js';
import { byState, cliAgainst, collect, delay, FAST, ledgerRows, startAgainst } from './helpers.js';

const SUBMIT = /^\/api\/v1\/client\/txt2audio$/;

/** The simulator behind a server that holds every submit, unanswered, until `release()`. */
async function hangingSubmits(sim: Simulator): Promise<{ server: Scripted; release: () => void; submits: () => number }> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = await startScripted(async (req) => {
    if (req.method === 'POST' && SUBMIT.test(req.url)) await released;
    return forward(sim.url, req);
  });
  return { server, release, submits: () => server.received.filter((req) => SUBMIT.test(req.url)).length };
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

/** The lines of a run's --log-file. */
/**
 * The log's lines, a line written twice counted once: at a forced exit the batch still in the
 * thread pool is written again unless the file shows it landed (written twice rather than lost),
 * and the pool may finish it in the same moment. Two real events differ at least in `at`.
 */
function logLines(file: string): Record<string, unknown>[] {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  return lines.filter((line, i) => line !== lines[i - 1]).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The stderr a child has written so far, kept up to date. */
function stderrOf(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}

describe('signals that end a terminal session', () => {
  const workspace = useWorkspace();
  const servers: Scripted[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('SIGHUP (terminal or ssh session closed) stops like SIGTERM: answers in flight are recorded, exit 130', async () => {
    // Slow answers: the hang-up lands while accepted submits still wait for theirs.
    const sim = await workspace.startSim({ ...FAST, latencyMs: 400 });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 12 });
    const log = path.join(workspace.dir, 'run.jsonl');
    const child = startAgainst(sim, ['run', manifest, '--concurrency', '4', '--log-file', log]);
    const ended = collect(child);
    const until = Date.now() + 30_000;
    while (sim.stats.accepted.length < 2 && Date.now() < until) await delay(5);
    expect(sim.stats.accepted.length).toBeGreaterThanOrEqual(2);
    child.kill('SIGHUP');
    const result = await ended;

    expect({ code: result.code, signal: result.signal }).toEqual({ code: 130, signal: null });
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.stderr).toContain('SIGHUP: stopping');
    const rows = await ledgerRows(path.join(workspace.dir, 'batch.mediabatch.db'));
    const counts = byState(rows);
    expect(counts['submitting'] ?? 0).toBe(0);
    expect(counts['in_doubt'] ?? 0).toBe(0);
    // Every job the service took is in the ledger with its request id.
    const recorded = new Set(rows.map((row) => row.request_id));
    for (const accepted of sim.stats.accepted) expect(recorded.has(accepted.requestId)).toBe(true);
    // The log holds the hang-up and the end, every line written before the exit.
    const lines = logLines(log);
    expect(lines.filter((line) => line['event'] === 'signal')).toEqual([expect.objectContaining({ signal: 'SIGHUP', forced: false })]);
    expect(lines.at(-1)).toMatchObject({ event: 'run_end', exit_code: 130 });
    expect(lines.filter((line) => line['event'] === 'submitted')).toHaveLength(sim.stats.accepted.length);
    expect(result.stderr).toContain(`run the same command again to resume: mediabatch run ${manifest} --concurrency 4 --log-file ${log} --base-url ${sim.url}`);
  });

  it('a stop while submits hang says what it waits for and how long; their answers are then recorded', async () => {
    const sim = await workspace.startSim(FAST);
    const hanging = await hangingSubmits(sim);
    servers.push(hanging.server);
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 5 });
    const args = ['run', manifest, '--concurrency', '3', '--base-url', hanging.server.url, '--plan', 'unlimited', '--poll-ms', '50'];
    const child = startCli(args, { env: { MEDIABATCH_TOKEN: sim.token } });
    const stderr = stderrOf(child);
    const ended = collect(child);
    await until(() => hanging.submits() === 3, 'three submits at the server');
    child.kill('SIGINT');
    await until(() => /waiting for 3 requests in flight/.test(stderr()), 'the stop message', 10_000);
    expect(stderr()).toMatch(/SIGINT: stopping: waiting for 3 requests in flight to answer \(up to 60 s, the request timeout\); press Ctrl-C again to force: they would become in doubt/);

    hanging.release();
    const result = await ended;
    expect(result.code, result.stderr).toBe(130);
    const rows = await ledgerRows(path.join(workspace.dir, 'batch.mediabatch.db'));
    expect(byState(rows)).toEqual({ submitted: 3, pending: 2 });
    const accepted = new Set(sim.stats.accepted.map((job) => job.requestId));
    expect(accepted.size).toBe(3);
    for (const row of rows.filter((r) => r.state === 'submitted')) expect(accepted.has(row.request_id ?? '')).toBe(true);
  });

  it('a second Ctrl-C while submits hang exits at once; the next run marks them in doubt and sends nothing', async () => {
    const sim = await workspace.startSim(FAST);
    const hanging = await hangingSubmits(sim);
    servers.push(hanging.server);
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const log = path.join(workspace.dir, 'run.jsonl');
    const args = ['run', manifest, '--concurrency', '2', '--base-url', hanging.server.url, '--plan', 'unlimited', '--poll-ms', '50', '--log-file', log];
    const child = startCli(args, { env: { MEDIABATCH_TOKEN: sim.token } });
    const stderr = stderrOf(child);
    const ended = collect(child);
    await until(() => hanging.submits() === 2, 'two submits at the server');
    child.kill('SIGINT');
    await until(() => /waiting for 2 requests in flight/.test(stderr()), 'the stop message', 10_000);
    child.kill('SIGINT');
    const result = await ended;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('SIGINT again: exiting now. 2 requests in flight become "in doubt" on the next run.');
    expect(byState(await ledgerRows(path.join(workspace.dir, 'batch.mediabatch.db')))).toEqual({ submitting: 2 });
    // A forced exit has no end to log, but what was waiting is written as the process exits.
    expect(logLines(log).map((line) => [line['event'], line['job_id'] ?? line['signal']])).toEqual([
      ['run_start', undefined],
      ['run_plan', undefined],
      ['submitting', 'line-00000'],
      ['submitting', 'line-00001'],
      ['signal', 'SIGINT'],
      ['signal', 'SIGINT'],
    ]);

    const next = await cliAgainst(sim, ['run', manifest, '--json']);
    expect(next.code, next.stderr).toBe(1);
    expect((JSON.parse(next.stdout) as { counts: { in_doubt: number } }).counts.in_doubt).toBe(2);
    expect(sim.stats.calls.submit).toBe(0);
  });
});
