import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { openManifest } from '../../src/manifest/open.js';
import { DEFAULT_RETRY, simulatorPoll } from '../../src/runner/context.js';
import { run } from '../../src/runner/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { expectDocument } from '../helpers/documents.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { forward, startScripted } from '../security/servers.js';
import { openSqliteLedger } from '../../src/store/index.js';

/** A port on 127.0.0.1 nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a service that cannot be reached', () => {
  const workspace = useWorkspace();

  it('a refused connection exits 4, naming the host and what to check; --json gets the error document', async () => {
    const port = await closedPort();
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const result = await runCli(['estimate', manifest, '--json'], { env: { MEDIABATCH_TOKEN: 'tok', MEDIABATCH_BASE_URL: `http://127.0.0.1:${port}` } });
    expect(result.code).toBe(4);
    const message = `GET /api/v1/client/models: cannot reach 127.0.0.1:${port} (ECONNREFUSED): check --base-url / MEDIABATCH_BASE_URL and your network; the request was not sent`;
    expect(result.stderr).toBe(`mediabatch: ${message}\n`);
    expect(expectDocument('error', result.stdout)).toEqual({ schema_version: 1, error: { code: 'E_CONNECT', message, exit_code: 4 } });
  });

  it('a certificate the TLS handshake refuses is a connection that never opened: exit 4, nothing received', async () => {
    const server = await startScripted(() => ({ status: 200, body: '{}' }), { tls: true });
    try {
      // The CLI's main in this process: the test above shows a connection's exit 4 through a process.
      const result = await mainInProcess(['models', '--base-url', server.url], { MEDIABATCH_TOKEN: 'tok' });
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(new RegExp(`^mediabatch: GET /api/v1/client/models: cannot reach 127\\.0\\.0\\.1:${server.port} \\(TLS: [A-Z_]+\\): check --base-url`));
      expect(hasStackTrace(result.stderr)).toBe(false);
      expect(server.received).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a balance call whose connection the server closed is asked again: the estimate goes on', async () => {
    const sim = await workspace.startSim();
    // The first balance request's socket is closed unanswered, as a server closes an idle keep-alive connection.
    let closed = 0;
    const front = await startScripted(async (req, res) => {
      if (req.url.endsWith('/balance') && closed === 0) {
        closed += 1;
        res.destroy();
        return undefined;
      }
      return forward(sim.url, req);
    });
    try {
      const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
      const env = { MEDIABATCH_TOKEN: sim.token, MEDIABATCH_BASE_URL: front.url };
      const estimated = await mainInProcess(['estimate', manifest, '--plan', 'unlimited'], env);
      expect(estimated.code, estimated.stderr).toBe(0);
      expect(closed).toBe(1);
      expect(front.received.filter((req) => req.url.endsWith('/balance'))).toHaveLength(2);
    } finally {
      await front.close();
    }
  });

  it('a run that loses the service midway: what was sent stays sent or in doubt, the rest pending, and the run stops saying why', async () => {
    const sim = await workspace.startSim();
    let submits = 0;
    // Every answer closes its connection, so each request connects anew; after the third submit
    // reached the simulator the proxy goes away: its answer is lost (in doubt), then nothing connects.
    const proxy = await startScripted(async (req) => {
      const reply = await forward(sim.url, req);
      if (req.method === 'POST' && req.url.endsWith('/txt2audio') && ++submits === 3) {
        await proxy.close();
        return undefined;
      }
      return { ...reply, headers: { ...reply.headers, connection: 'close' } };
    });
    const dir = workspace.dir;
    const manifestFile = await writeTtsManifest(dir, { jobs: 12 });
    const ledgerPath = path.join(dir, 'batch.mediabatch.db');
    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-write' });
    const client = createServiceClient({ baseUrl: proxy.url, token: sim.token });
    const files = { db: ledgerPath, out: path.join(dir, 'batch.out'), runJson: path.join(dir, 'batch.run.json'), runCsv: path.join(dir, 'batch.run.csv'), legacyReport: path.join(dir, 'batch.report.json') };
    let jobs: { id: string; state: string; requestId: string | null }[] = [];
    let fatal: unknown;
    try {
      const ran = await run({
        manifest: await openManifest(manifestFile),
        ledger,
        service: { client, baseUrl: proxy.url },
        files,
        plan: 'unlimited',
        concurrency: 2,
        poll: { schedules: simulatorPoll() },
        retry: { ...DEFAULT_RETRY, minDelayMs: 5, maxDelayMs: 20 },
      });
      fatal = ran.outcome?.execute.fatal;
      jobs = await ledger.readJobs({ scope: 'report', limit: 100 });
    } finally {
      await client.close();
      await ledger.close();
    }
    expect(fatal).toMatchObject({ code: 'E_CONNECT', exitCode: 4 });
    expect((fatal as Error).message).toContain(`cannot reach 127.0.0.1:${proxy.port} (ECONNREFUSED)`);
    // Whatever the service took is sent (with its request id) or in doubt in the ledger, never
    // pending; nothing was taken twice; the rest was never sent and stays pending.
    const accepted = new Set(sim.stats.accepted.map((job) => job.requestId));
    const sent = jobs.filter((job) => job.state === 'submitted' || job.state === 'done');
    const inDoubt = jobs.filter((job) => job.state === 'in_doubt');
    const pending = jobs.filter((job) => job.state === 'pending');
    expect(accepted.size).toBeGreaterThanOrEqual(3);
    for (const job of sent) expect(accepted.has(job.requestId ?? '')).toBe(true);
    expect(inDoubt.length).toBeGreaterThanOrEqual(1);
    expect(sent.length + inDoubt.length).toBeGreaterThanOrEqual(accepted.size);
    expect(sent.length + inDoubt.length + pending.length).toBe(12);
    expect(pending.length).toBeGreaterThan(0);
    expect(sim.stats.duplicates()).toEqual([]);
    // The run's file says what ended it.
    const report = expectDocument<{ error: { code: string } }>('run', readFileSync(files.runJson, 'utf8'));
    expect(report.error.code).toBe('E_CONNECT');
  });
});
