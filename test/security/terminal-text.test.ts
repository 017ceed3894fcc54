import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { speechManifest, startProxy, startScripted, type Scripted } from './servers.js';
import { ledgerRows } from '../reliability/helpers.js';

/** What a hostile service puts in its texts: a window title, a screen clear, a forged line. */
const TITLE = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J';
const FORGED = '\r\nall 500 jobs done';
const PAYLOAD = `bad ${TITLE} text ${CLEAR}${FORGED} \u202eevil\u202c`;

const STATUS = /^\/api\/v1\/client\/request-status\//;

/** No raw control character reaches the terminal, and no line was forged. */
function expectClean(result: Pick<CliResult, 'stdout' | 'stderr'>): void {
  for (const text of [result.stdout, result.stderr]) {
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(text).not.toMatch(/^\s*all 500 jobs done/m);
  }
}

describe('text from the service reaches the terminal escaped', () => {
  let sim: Simulator;
  let proxy: Scripted;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-ctrl-'));
    sim = await startSimulator({ pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 } });
    proxy = await startProxy(sim.url, {
      // A 422 refusing one job, its message and field errors carrying the payload.
      submit: (text) =>
        text.includes('refuse')
          ? { status: 422, body: JSON.stringify({ message: PAYLOAD, errors: { text: [PAYLOAD] } }) }
          : undefined,
      // Every job that was taken ends in an error whose fields carry the payload.
      any: (req) =>
        req.method === 'GET' && STATUS.test(req.url)
          ? {
              status: 200,
              body: JSON.stringify({
                data: { status: 'error', error_code: `WORKER_ERROR${CLEAR}`, error_message: PAYLOAD, error_reason: `x${TITLE}`, retryable: false, refunded: false },
              }),
            }
          : undefined,
    });
  });
  afterEach(async () => {
    await proxy.close();
    await sim.close();
    await cleanup();
  });

  it('in run, status and the ledger: visible escapes instead of raw control characters', async () => {
    const manifest = path.join(dir, 'batch.yaml');
    await writeFile(manifest, speechManifest([{ id: 'refused', text: 'refuse me' }, { id: 'failing', text: 'fail me' }]));
    const env = { env: { MEDIABATCH_TOKEN: sim.token } };
    const run = await runCli(['run', manifest, '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'], env);
    expect(run.code, run.stderr).toBe(1);
    expect(hasStackTrace(run.stderr)).toBe(false);
    expectClean(run);
    // Made visible, not dropped: the person can see something odd was sent.
    expect(run.stderr).toContain('\\x1b]0;pwned\\x07');
    expect(run.stdout).toContain('\\x1b[2J');

    const errors = await ledgerRows(path.join(dir, 'batch.mediabatch.db'));
    expect(errors).toHaveLength(2);
    for (const { last_error } of errors) expect(last_error).not.toMatch(/[\u001b\u0007\r\n\u202e]/);

    // The run above through a process (whatever it writes, by any way, reaches its pipes); the rest
    // through the CLI's main in this process.
    const status = await mainInProcess(['status', manifest], env.env);
    expect(status.code).toBe(0);
    expectClean(status);
  });

  it('status escapes raw text an older ledger holds', async () => {
    const manifest = path.join(dir, 'batch.yaml');
    await writeFile(manifest, speechManifest([{ id: 'failing', text: 'fail me' }]));
    const env = { env: { MEDIABATCH_TOKEN: sim.token } };
    await mainInProcess(['run', manifest, '--base-url', proxy.url, '--plan', 'unlimited', '--poll-ms', '50'], env.env);
    // What an earlier mediabatch stored: the service's text as it came. Raw SQL on purpose: no
    // code of this version writes unescaped text, so the file is changed from outside.
    const ledger = new Database(path.join(dir, 'batch.mediabatch.db'));
    ledger.prepare('UPDATE jobs SET last_error = ?').run(PAYLOAD);
    ledger.close();

    const status = await mainInProcess(['status', manifest], env.env);
    expect(status.code).toBe(0);
    expectClean(status);
    expect(status.stdout).toContain('\\u202eevil');
  });

  it('models: names, languages and voices from the catalogue', async () => {
    const catalogue = await startScripted(() => ({
      status: 200,
      body: JSON.stringify({
        data: [
          {
            slug: 'Evil',
            name: `Evil${TITLE}`,
            inference_types: ['txt2audio'],
            info: [],
            languages: [{ slug: 'en', name: `English${FORGED}`, voices: [{ slug: `v${CLEAR}`, name: 'v' }] }],
          },
        ],
        meta: { current_page: 1, last_page: 1, per_page: 50, total: 1 },
      }),
    }));
    try {
      const models = await mainInProcess(['models', '--base-url', catalogue.url], { MEDIABATCH_TOKEN: 't' });
      expect(models.code, models.stderr).toBe(0);
      expectClean(models);
      expect(models.stdout).toContain('Evil\\x1b]0;pwned\\x07');
    } finally {
      await catalogue.close();
    }
  });
});
