import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace, runCli, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, mainAgainst, simArgs } from '../reliability/helpers.js';
import { clockAtUtcHour } from '../helpers/clock.js';

/** A token no line of a log may hold. */
const TOKEN = 'tok-3f9c1e77a2b84d05-secret';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Line {
  at: string;
  event: string;
  [field: string]: unknown;
}

/** Every line of the file, each checked to be one JSON object with its ISO time and event name. */
function readLog(file: string): Line[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((raw) => {
      const line = JSON.parse(raw) as Line;
      expect(line.at, raw).toMatch(ISO);
      expect(typeof line.event, raw).toBe('string');
      return line;
    });
}

const ofKind = (lines: readonly Line[], event: string): Line[] => lines.filter((line) => line.event === event);

describe('run --log-file', () => {
  const workspace = useWorkspace();

  it('writes one JSON line per event: start, plan, submits, retries, the 429 pause, the end; never the token', async () => {
    // Every other submit draws a 503 (retried), and the daily cap stops the run after a few. (A
    // submit waiting for its retry once waited in the paused class until midnight: --no-wait hung.)
    // The simulator's clock reads 12:xx UTC: its reset is hours away, on a whole hour of the real clock.
    const sim = await workspace.startSim({ ...FAST, clock: clockAtUtcHour(12), token: TOKEN, faults: 'submit:503=0.5', seed: 7, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 4 } } });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 8 });
    const file = path.join(workspace.dir, 'logs', 'run.jsonl');
    const result = await mainAgainst(sim, ['run', manifest, '--no-wait', '--log-file', file]);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect(result.code, result.stderr).toBe(1);

    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(TOKEN);
    const lines = readLog(file);
    expect(lines[0]).toMatchObject({ event: 'run_start', manifest, base_url: sim.url, options: { wait: false, log_file: file } });
    const accepted = sim.stats.accepted.map((job) => job.requestId).sort();
    expect(lines.at(-1)).toMatchObject({ event: 'run_end', exit_code: 1, counts: { submitted: accepted.length, pending: 8 - accepted.length } });
    expect(ofKind(lines, 'run_plan')).toEqual([expect.objectContaining({ jobs: 8, to_submit: 8, plan: 'unlimited', budget_usd: null })]);
    expect(ofKind(lines, 'submitted').map((line) => line.request_id).sort()).toEqual(accepted);
    expect(ofKind(lines, 'submitting').length).toBeGreaterThan(accepted.length);
    // One retry line for each 503 the simulator injected.
    expect(sim.stats.faults['503']).toBeGreaterThan(0);
    expect(ofKind(lines, 'retry')).toHaveLength(sim.stats.faults['503'] ?? 0);
    expect(ofKind(lines, 'retry')[0]).toMatchObject({ what: expect.stringMatching(/^submit line-\d{5}$/), attempt: 1, delay_ms: expect.any(Number) });
    const pauses = ofKind(lines, 'paused');
    expect(pauses).toEqual([expect.objectContaining({ what: 'submit:txt2audio', reason: 'the daily limit', until: expect.stringMatching(/T\d\d:00:0\d\.\d{3}Z$/) })]);
    expect(ofKind(lines, 'not_taken').length).toBeGreaterThanOrEqual(1);
    // Times only go forward.
    const times = lines.map((line) => Date.parse(line.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('a resumed run appends to the same file (MEDIABATCH_LOG_FILE too): downloads, failures and warnings', async () => {
    const sim = await workspace.startSim({ ...FAST, token: TOKEN, jobErrorRate: 0.3, errorRetryable: false, seed: 3 });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 6 });
    const file = path.join(workspace.dir, 'run.jsonl');
    const logEnv = { MEDIABATCH_TOKEN: TOKEN, MEDIABATCH_LOG_FILE: file };
    const first = await mainInProcess(['run', manifest, '--no-wait', ...simArgs(sim)], logEnv);
    expect(first.code, first.stderr).toBe(1);
    const before = readFileSync(file, 'utf8');
    // A job changed after it was sent keeps its result; the run says so.
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('text: "Line 0:', 'text: "Line zero:'));

    const second = await mainAgainst(sim, ['run', manifest, '--log-file', file]);
    expect([0, 1]).toContain(second.code);
    const after = readFileSync(file, 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after).not.toContain(TOKEN);
    const lines = readLog(file);
    expect(lines.map((line) => line.event).filter((e) => e.startsWith('run_'))).toEqual(['run_start', 'run_plan', 'run_end', 'run_start', 'run_plan', 'run_end']);
    const resumed = lines.slice(lines.findIndex((line, i) => i > 0 && line.event === 'run_start'));
    expect(ofKind(resumed, 'run_plan')[0]).toMatchObject({ to_submit: 0, to_follow: 6 });
    expect(ofKind(resumed, 'warning').map((line) => line.message)).toEqual([
      'job "line-00000" changed after it was submitted: it keeps its earlier result (submitted). Give it a new id to generate it again.',
    ]);
    const done = ofKind(resumed, 'done');
    const failed = ofKind(resumed, 'failed');
    expect(done.length + failed.length).toBe(6);
    expect(failed.length).toBeGreaterThan(0);
    for (const line of done) expect(line.bytes).toBe(statSync(String(line.path)).size);
    expect(resumed.at(-1)).toMatchObject({ event: 'run_end', exit_code: second.code, counts: { done: done.length, failed: failed.length } });
  });

  it('a log file in a folder that cannot be made: exit 4 before anything is sent or any ledger made', async () => {
    const sim = await workspace.startSim({ ...FAST, token: TOKEN });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const notAFolder = path.join(workspace.dir, 'notes.txt');
    writeFileSync(notAFolder, 'a file, not a folder\n');
    const file = path.join(notAFolder, 'run.jsonl');
    const result = await mainAgainst(sim, ['run', manifest, '--log-file', file]);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      `mediabatch: --log-file ${file}: cannot make its folder ${notAFolder} (EEXIST: a file stands where a folder should be); give a file in a folder you can write (or leave --log-file out). Nothing was sent.\n`,
    );
    expect(existsSync(path.join(workspace.dir, 'batch.mediabatch.db'))).toBe(false);
    expect(sim.stats.calls).toEqual(expect.objectContaining({ submit: 0 }));
  });

  it('a FIFO nobody reads, a folder or a device as the log file: exit 4 at once with a message, never a hang', async () => {
    const sim = await workspace.startSim({ ...FAST, token: TOKEN });
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const fifo = path.join(workspace.dir, 'log.fifo');
    execFileSync('mkfifo', [fifo]);
    const folder = path.join(workspace.dir, 'logs');
    mkdirSync(folder);
    const fifoWhy = 'cannot open it for appending (ENXIO: a pipe nobody reads)';
    // Opened blocking, the FIFO held the main thread (and SIGTERM with it) for ever: spawns, whose
    // short timeout turns such a hang into a failure of this test (in this process it would hang the worker).
    const spawned = [
      { file: fifo, env: {}, why: fifoWhy },
      { file: fifo, env: { MEDIABATCH_LOG_FILE: fifo }, why: fifoWhy },
    ];
    const inThisProcess = [
      { file: folder, env: {}, why: 'cannot open it for appending (EISDIR: it is a folder)' },
      { file: '/dev/null', env: {}, why: 'it is a pipe or a device, not a regular file' },
    ];
    const args = (file: string, env: Record<string, string | undefined>): string[] => {
      const logFile = 'MEDIABATCH_LOG_FILE' in env ? [] : ['--log-file', file];
      return ['run', manifest, '--base-url', sim.url, '--plan', 'unlimited', ...logFile];
    };
    // Each refused before the ledger is opened, so the spawns all at once; main in this process in turn.
    const results: Pick<CliResult, 'code' | 'stderr'>[] = await Promise.all(
      spawned.map(({ file, env }) => {
        return runCli(args(file, env), { env: { MEDIABATCH_TOKEN: TOKEN, ...env }, timeoutMs: 20_000 });
      }),
    );
    for (const { file, env } of inThisProcess) {
      results.push(await mainInProcess(args(file, env), { MEDIABATCH_TOKEN: TOKEN, ...env }));
    }
    for (const [i, { file, why }] of [...spawned, ...inThisProcess].entries()) {
      const result = results[i]!;
      expect(result.code, result.stderr).toBe(4);
      expect(result.stderr).toBe(`mediabatch: --log-file ${file}: ${why}; give a file in a folder you can write (or leave --log-file out). Nothing was sent.\n`);
    }
    expect(existsSync(path.join(workspace.dir, 'batch.mediabatch.db'))).toBe(false);
    expect(sim.stats.calls).toEqual(expect.objectContaining({ submit: 0 }));
  });
});
