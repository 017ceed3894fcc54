import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { startSecondServer, type SecondServer } from './second-server.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { createServiceClient } from '../../src/api/client.js';
import { ManifestError, type ManifestIssue } from '../../src/manifest/errors.js';
import { openManifest } from '../../src/manifest/open.js';
import { check } from '../../src/runner/index.js';

const DEFAULTS = '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }';

const VALID = ['version: 1', 'budget: 2', 'defaults:', DEFAULTS, 'jobs:',
  '  - id: one', '    type: txt2audio', '    text: "Hello there."',
  '  - id: two', '    type: txt2audio', '    voice: am_adam', '    text: "General Kenobi."', ''].join('\n');

// Four problems a service is not needed for: a typo'd key, a speed that is not a number, a duplicate id, a bad id.
const BROKEN = ['version: 1', 'defaults:', DEFAULTS, 'jobs:',
  '  - id: one', '    type: txt2audio', '    text: "Hello."', '    voise: af_bella',
  '  - id: two', '    type: txt2audio', '    text: "Again."', '    speed: fast',
  '  - id: one', '    type: txt2audio', '    text: "Twice."',
  '  - id: "../escape"', '    type: txt2audio', '    text: "Out."', ''].join('\n');

// Valid offline, wrong against the catalogue: a voice Kokoro does not have.
const UNKNOWN_VOICE = ['version: 1', 'defaults:', DEFAULTS, 'jobs:',
  '  - id: one', '    type: txt2audio', '    text: "Hello."',
  '  - id: two', '    type: txt2audio', '    text: "Hello."', '    voice: af_skye', ''].join('\n');

interface Problem {
  file: string;
  line: number;
  col: number;
  field?: string;
  message: string;
  hint?: string;
}

/** The problems a check rejects with (it must reject). */
async function issuesOf(checking: Promise<unknown>): Promise<ManifestIssue[]> {
  const error = await checking.then(
    () => undefined,
    (rejected: unknown) => rejected,
  );
  expect(error).toBeInstanceOf(ManifestError);
  return (error as ManifestError).issues;
}

/**
 * `validate` through the CLI's main in this process (the exit code it returns, what it writes);
 * through the built CLI where the process matters: a manifest on stdin, and a run's lock held by
 * another live process (this one).
 */
describe('mediabatch validate', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let sim: Simulator | undefined;
  let server: SecondServer | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
    await server?.close();
    server = undefined;
    await cleanup();
  });

  const write = async (name: string, text: string) => {
    const file = path.join(dir, name);
    await writeFile(file, text);
    return file;
  };

  it('reports every problem of a broken manifest at file:line:col, exit 2, no stack trace; --json lists them', async () => {
    const file = await write('broken.yaml', BROKEN);
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(hasStackTrace(result.stderr)).toBe(false);
    const lines = result.stderr.trim().split('\n');
    const located = lines.filter((l) => l.startsWith(`${file}:`));
    expect(located).toHaveLength(4);
    for (const line of located) expect(line).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+ `));
    expect(result.stderr).toContain(`${file}:8:5 job "one" (#1) voise: unknown field; did you mean "voice"?`);
    expect(result.stderr).toMatch(new RegExp(`:12:12 job "two" \\(#2\\) speed: .*got "fast"`));
    expect(result.stderr).toMatch(/:13:9 job "one" \(#3\) id: expected a unique id/);
    expect(result.stderr).toMatch(/:16:9 job "\.\.\/escape" \(#4\) id: expected an id of letters, digits/);
    expect(lines.at(-1)).toBe(`4 problems in ${file}; nothing was sent.`);

    // The problems --json lists are the check's (the document's shape: the catalogue test below).
    const problems = await issuesOf(check({ manifest: await openManifest(file) }));
    expect(problems.map((p) => [p.line, p.col, p.field])).toEqual([
      [8, 5, 'voise'],
      [12, 12, 'speed'],
      [13, 9, 'id'],
      [16, 9, 'id'],
    ]);
    for (const problem of problems) expect(problem.file).toBe(file);
  });

  it('refuses a graph of results that cannot run, located at each referring field, exit 2, offline', async () => {
    const file = await write('graph.yaml', ['version: 1', 'defaults:', DEFAULTS, 'jobs:',
      '  - { id: one, type: txt2audio, text: "Hello." }',
      '  - { id: two, type: txt2audio, text: { from: one } }',
      '  - { id: three, type: img-upscale, model: RealESRGAN_x4plus, image: { from: four } }',
      '  - { id: four, type: img-upscale, model: RealESRGAN_x4plus, image: { from: three } }', ''].join('\n'));
    const result = await mainInProcess(['validate', file, '--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${file}:6:39 job "two" (#2) text: expected the id of a job that makes text, got "one" (txt2audio, which makes audio); refer to a job that makes text, or give text a value of its own`,
      `${file}:8:69 job "four" (#4) image: expected references that do not lead back to this job, got a cycle: four → three → four; one of these jobs must take this field from a file or a text of its own`,
      `2 problems in ${file}; nothing was sent.`,
    ]);
  });

  it("caches the catalogue in the manifest's ledger; while a run holds the ledger, checks against the catalogue without writing it", async () => {
    sim = await startSimulator();
    const file = await write('jobs.yaml', VALID);
    const db = path.join(dir, 'jobs.mediabatch.db');
    // A run's lock, held by a live process: this one.
    const run = await openSqliteLedger(db, { mode: 'read-write' });
    try {
      await run.acquireRunLock({ pid: process.pid, host: hostname(), command: 'run' });
      const result = await runCli(['validate', file, '--base-url', sim.url], { env: { MEDIABATCH_TOKEN: sim.token } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('2 job(s), valid (checked against the models catalogue)');
      expect(await run.getCatalogue(sim.url, 3_600_000)).toBeUndefined();
    } finally {
      await run.close();
    }
    const free = await mainInProcess(['validate', file, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
    expect(free.code, free.stderr).toBe(0);
    const ledger = await openSqliteLedger(db, { mode: 'read-only' });
    try {
      expect(await ledger.getCatalogue(sim.url, 3_600_000)).toEqual(expect.any(Array));
    } finally {
      await ledger.close();
    }
  });

  it('finds duplicate ids without writing a file: from stdin too, and for estimate without a token, with no temporary folder to write in', async () => {
    const job = (id: string) => JSON.stringify({ id, type: 'txt2audio', text: 'Hi.', model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 });
    const input = [job('a-1'), job('b'), job('A-1'), job('b'), ''].join('\n');
    const env = { TMPDIR: path.join(dir, 'no-such-folder') };
    const result = await runCli(['validate', '-', '--offline'], { input, cwd: dir, env });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe(
      [
        '<stdin>:3:7 job "A-1" id: expected a unique id, got "A-1" (the job at <stdin>:1:1 has "a-1"); ids become file names, and some file systems ignore case',
        '<stdin>:4:7 job "b" id: expected a unique id, got "b" (also the id of the job at <stdin>:2:1)',
        '2 problems in <stdin>; nothing was sent.',
        '',
      ].join('\n'),
    );
    const valid = await mainInProcess(['validate', await write('valid.yaml', VALID), '--offline'], env);
    expect(valid.code, valid.stderr).toBe(0);
    // estimate without a token checks the manifest offline first, the same way.
    const broken = await write('broken.yaml', BROKEN);
    const estimate = await mainInProcess(['estimate', broken], env);
    expect(estimate.code, estimate.stderr).toBe(2);
    expect(estimate.stderr).toContain(`${broken}:13:9 job "one" (#3) id: expected a unique id, got "one" (also the id of the job at ${broken}:5:5)`);
  });

  it('--offline sends no request at all, even with a token and a base URL', async () => {
    server = await startSecondServer();
    const env = { MEDIABATCH_TOKEN: server.token };
    const valid = await write('valid.yaml', VALID);
    const broken = await write('broken.yaml', BROKEN);
    const voice = await write('voice.yaml', UNKNOWN_VOICE);

    const ok = await mainInProcess(['validate', valid, '--offline', '--base-url', server.url], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe(`${valid}: 2 job(s), valid (offline checks only).`);
    const okJson = await mainInProcess(['validate', valid, '--offline', '--json', '--base-url', server.url], env);
    expect(JSON.parse(okJson.stdout)).toMatchObject({ valid: true, jobs: 2, offline: true, problems: [] });
    // The voice can only be checked against the catalogue: offline (the check without a service) it passes.
    expect(await check({ manifest: await openManifest(voice) })).toEqual({ jobs: 2 });
    const brokenOffline = await mainInProcess(['validate', broken, '--offline', '--base-url', server.url], env);
    expect(brokenOffline.code, brokenOffline.stderr).toBe(2);
    expect(server.requests).toEqual([]);
  });

  it('without a token it checks offline and says so', async () => {
    const valid = await write('valid.yaml', VALID);
    const result = await mainInProcess(['validate', valid, '--base-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/no token given: checked offline only/);
  });

  it('with a token checks the catalogue: an unknown voice exits 2 with the voices listed; never prices or submits', async () => {
    sim = await startSimulator();
    const env = { MEDIABATCH_TOKEN: sim.token };
    const args = ['--base-url', sim.url];
    const voice = await write('voice.yaml', UNKNOWN_VOICE);
    const valid = await write('valid.yaml', VALID);

    const bad = await mainInProcess(['validate', voice, ...args], env);
    expect(bad.code).toBe(2);
    expect(hasStackTrace(bad.stderr)).toBe(false);
    expect(bad.stderr).toContain(
      `${voice}:11:12 job "two" (#2) voice: expected a voice of Kokoro for en-us, got "af_skye"; voices for en-us: af_sky, af_bella, am_adam`,
    );
    const badJson = await mainInProcess(['validate', voice, ...args, '--json'], env);
    expect(badJson.code).toBe(2);
    const problems = (JSON.parse(badJson.stdout) as { problems: Problem[] }).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: voice, line: 11, col: 12, field: 'voice', hint: 'voices for en-us: af_sky, af_bella, am_adam' });

    // A valid manifest passes the same check (its line on stdout: the catalogue-cache test above).
    const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
    try {
      expect(await check({ manifest: await openManifest(valid), service: { client, baseUrl: sim.url } })).toEqual({ jobs: 2 });
    } finally {
      await client.close();
    }

    expect(sim.stats.calls.models).toBeGreaterThan(0);
    expect(sim.stats.calls.price).toBe(0);
    expect(sim.stats.calls.submit).toBe(0);
    expect(sim.stats.accepted).toEqual([]);
  });

  it('against a second implementation of the API: finds models past the first 50, and a wrong token is one line, exit 4', async () => {
    server = await startSecondServer();
    const manifest = await write('second.yaml', ['version: 1', 'defaults:',
      '  txt2audio: { model: Second_Tts_058, voice: v058_beta, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }', 'jobs:',
      '  - id: one', '    type: txt2audio', '    text: "Hello."',
      '  - id: two', '    type: txt2audio', '    text: "Hello."', '    voice: v058_gamma', ''].join('\n'));

    const wrong = 'wrong-token-5e2b9c';
    const refused = await mainInProcess(['validate', manifest, '--base-url', server.url, '--json'], { MEDIABATCH_TOKEN: wrong });
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: 'E_API_AUTH', exit_code: 4 } });
    expect(refused.stdout).not.toContain(wrong);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).not.toContain(wrong);

    const result = await mainInProcess(['validate', manifest, '--base-url', server.url], { MEDIABATCH_TOKEN: server.token });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${manifest}:11:12 job "two" (#2) voice: expected a voice of Second_Tts_058 for en-us, got "v058_gamma"; voices for en-us: v058_alpha, v058_beta`,
    );
    expect(result.stderr).not.toMatch(/job "one"/);
    expect(server.requests.every((r) => r.method === 'GET' && r.path === '/api/v1/client/models')).toBe(true);
  });
});

