import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { startProxy, type Received } from '../security/servers.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { freePort, HOOK_URL, outcomes } from './helpers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { eventsFor } from '../support/events.js';

/** Every file a run left in `dir` but the ledger itself, where the secret belongs. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return filesUnder(file);
    return /\.mediabatch\.db(-wal|-shm)?$/.test(name) ? [] : [file];
  });
}

describe('the webhook secret', () => {
  const workspace = useWorkspace();

  it('is kept in the ledger only: never in output, --json, status, reports, results or the event log', async () => {
    const port = await freePort();
    const sim = await workspace.startSim({ pendingMs: { txt2audio: 10 }, processingMs: { txt2audio: 30 }, webhookTarget: `http://127.0.0.1:${port}` });
    // A service that echoes what it was sent in its errors: a refusal, and a failure that leaves a job in doubt.
    const echo = (req: Received): string => `you sent ${req.body}`;
    const proxy = await startProxy(sim.url, {
      submit: (text, req) => {
        if (text.startsWith('Line 1:')) return { status: 422, body: JSON.stringify({ message: echo(req), errors: { webhook_secret: [echo(req)] } }) };
        if (text.startsWith('Line 2:')) return { status: 500, body: JSON.stringify({ message: echo(req) }) };
        return undefined;
      },
    });
    try {
      await check(proxy.url, port, sim.token);
    } finally {
      await proxy.close();
    }
  });

  async function check(baseUrl: string, port: number, token: string): Promise<void> {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 4 });
    const env = { env: { MEDIABATCH_TOKEN: token } };
    const hooks = ['--webhook-url', HOOK_URL, '--listen', `127.0.0.1:${port}`];
    const ran = await runCli(['run', manifest, '--base-url', baseUrl, '--plan', 'unlimited', '--poll-ms', '50', ...hooks, '--json'], env);
    expect(ran.code, ran.stderr).toBe(1);
    expect(hasStackTrace(ran.stderr)).toBe(false);
    expect(ran.stderr).toMatch(new RegExp(`^(\\[[0-9:]+\\] )?webhooks listening on 127\\.0\\.0\\.1:${port} for POSTs to /mediabatch/deapi; jobs not heard from are polled$`, 'm'));
    expect(ran.stderr).toMatch(/^(\[[0-9:]+\] )?webhooks [1-9]\d* applied, 0 seen before, \d+ changing nothing, 0 refused$/m);
    expect(ran.stderr).toContain('[redacted]');
    expect(ran.stderr).toMatch(/^(\[[0-9:]+\] )?failed   line-00001: .*\[redacted\]/m);
    const outputs = [ran.stdout, ran.stderr];
    // status reads the ledger alone: the CLI's main in this process.
    const status = await mainInProcess(['status', manifest], env.env);
    expect(status.code, status.stderr).toBe(0);
    outputs.push(status.stdout, status.stderr);

    const ledger = await openSqliteLedger(path.join(workspace.dir, 'batch.mediabatch.db'), { mode: 'read-only' });
    let secret: string;
    let events: string;
    try {
      const runs = await ledger.webhookRuns();
      expect(runs).toHaveLength(1);
      secret = runs[0]!.secret;
      const jobs = await outcomes(ledger);
      expect(jobs.map((job) => job.state)).toEqual(['done', 'failed', 'in_doubt', 'done']);
      events = JSON.stringify([await eventsFor(ledger, null), ...(await Promise.all(jobs.map((job) => eventsFor(ledger, job.id))))]);
    } finally {
      await ledger.close();
    }
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(events).toContain('webhook_processing');
    expect(events).not.toContain(secret);
    for (const text of outputs) expect(text).not.toContain(secret);
    const files = filesUnder(workspace.dir);
    expect(files.some((file) => file.endsWith('batch.run.json'))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file);
      expect(bytes.includes(secret), `secret found in ${file}`).toBe(false);
      expect(bytes.includes(Buffer.from(secret, 'utf16le')), `secret (UTF-16) found in ${file}`).toBe(false);
    }
  }
});
