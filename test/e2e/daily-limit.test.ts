import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { byState, collect, delay, FAST, ledgerRows, mainAgainst, startAgainst } from '../reliability/helpers.js';
import { useWorkspace } from '../helpers/workspace.js';
import { clockAtUtcHour } from '../helpers/clock.js';

/**
 * The service's daily cap (Basic: 300 speech submits a day): the run must wait or say when to return.
 * The simulator's clock reads 12:xx UTC whatever the hour, so its reset at 00:00 UTC is 11 to 12
 * hours away, and on a whole hour of the CLI's (real) clock.
 */
describe('a daily limit reached mid-run', () => {
  const clock = clockAtUtcHour(12);
  const workspace = useWorkspace();
  let sim: Simulator;
  let dir: string;

  beforeEach(() => {
    dir = workspace.dir;
  });

  it('with --no-wait: exit 1, says when to run again, and the rest stays pending, not in doubt', async () => {
    sim = await workspace.startSim({ ...FAST, clock, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 3 } } });
    const manifest = await writeTtsManifest(dir, { jobs: 8 });
    // The CLI's main in this process: the last test shows the hint through a process, under another time zone.
    const result = await mainAgainst(sim, ['run', manifest, '--no-wait']);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.code, result.stderr).toBe(1);
    // When, in local time, how long, and the very command that was given.
    expect(result.stderr).toMatch(
      /the daily limit is reached; run the same command again after (\d{4}-\d\d-\d\d )?\d\d:\d\d(:\d\d)? \(in 1[12]h\d\dm\) to resume: mediabatch run \S+ --no-wait --base-url /,
    );
    expect(byState(await ledgerRows(`${dir}/batch.mediabatch.db`))).toEqual({ submitted: 3, pending: 5 });
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('without --no-wait: pauses the class and keeps the jobs pending; a stop then leaves nothing in doubt', async () => {
    sim = await workspace.startSim({ ...FAST, clock, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 2 } } });
    const manifest = await writeTtsManifest(dir, { jobs: 6 });
    const child = startAgainst(sim, ['run', manifest]);
    const ended = collect(child);
    // Two are taken, the third draws the daily 429: the run now waits for the simulator's 00:00 UTC.
    for (let waited = 0; sim.stats.rateLimited['submit:txt2audio'] === undefined && waited < 10_000; waited += 50) await delay(50);
    await delay(300);
    child.kill('SIGTERM');
    const result = await ended;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/paused +txt2audio submits by the daily limit until (\d{4}-\d\d-\d\d )?\d\d:\d\d(:\d\d)? \(in 1[12]h\d\dm\)/);
    const counts = byState(await ledgerRows(`${dir}/batch.mediabatch.db`));
    expect(counts.in_doubt).toBeUndefined();
    expect(counts.pending).toBe(4);
    expect(sim.stats.accepted).toHaveLength(2);
  });

  it('the command to paste repeats every option given, quoted for the shell; the time is local', async () => {
    sim = await workspace.startSim({ ...FAST, clock, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 2 } } });
    const manifest = await writeTtsManifest(dir, { jobs: 4 });
    const tokenFile = path.join(dir, 'token.txt');
    writeFileSync(tokenFile, `${sim.token}\n`);
    const out = path.join(dir, 'my results');
    const db = path.join(dir, 'ledgers', 'b.db');
    const log = path.join(dir, 'run log.jsonl');
    const options = [
      ['--no-wait', '--budget', '2', '--plan', 'unlimited', '--out', out, '--db', db, '--concurrency', '2', '--partial', '--poll-ms', '50'],
      ['--max-result-mb', '20', '--allow-outside-files', '--base-url', sim.url, '--token-file', tokenFile, '--log-file', log, '--json'],
    ].flat();
    // India is 5h30 ahead of UTC, with no summer time: a reset on a whole UTC hour reads hh:30 there.
    const result = await runCli(['run', manifest, ...options, '--resubmit-in-doubt'], { env: { TZ: 'Asia/Kolkata' } });
    expect(result.code, result.stderr).toBe(1);
    const hint =
      `mediabatch run ${manifest} --no-wait --budget 2 --plan unlimited --out '${out}' --db ${db} --concurrency 2 --partial --poll-ms 50 ` +
      `--max-result-mb 20 --allow-outside-files --base-url ${sim.url} --token-file ${tokenFile} --log-file '${log}' --json ` +
      '(without --resubmit-in-doubt: add it again only once you have checked that no result came for the jobs in doubt)';
    const line = result.stderr.split('\n').find((l) => l.startsWith('the daily limit is reached'));
    // The reset is read as the simulator's Retry-After from when its answer reaches the CLI: a
    // loaded machine shows it a few seconds past the whole minute (19:30:02), never before it.
    expect(line).toMatch(/^the daily limit is reached; run the same command again after (\d{4}-\d\d-\d\d )?\d\d:30(:\d\d)? \(in 1[12]h\d\dm\) to resume: /);
    expect(line?.slice(line.indexOf(': mediabatch run ') + 2)).toBe(hint);
    expect(result.stderr).not.toContain(sim.token);
    expect(readFileSync(log, 'utf8')).not.toContain(sim.token);
    expect(sim.stats.accepted).toHaveLength(2);
  });
});
