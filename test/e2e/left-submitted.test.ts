import { uniformPoll } from '../../src/runner/context.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, ledgerRows, mainAgainst, type StatusJson, simArgs } from '../reliability/helpers.js';
import { speechManifest, startProxy, startScripted, type Scripted } from '../security/servers.js';
import { openSqliteLedger } from '../../src/store/index.js';

type StatusDoc = StatusJson & { jobs: (StatusJson['jobs'][number] & { collect_issue: string | null })[] };

describe('run: what the end of a run says about jobs it could not finish', () => {
  const workspace = useWorkspace();
  const servers: Scripted[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('never calls a job "still running" that the service said was done, or did not know (404); both stay submitted', async () => {
    const sim = await workspace.startSim({ ...FAST });
    const storage = await startScripted(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html>Quota exceeded</html>' }));
    let unknownRequest = '';
    const proxy = await startProxy(sim.url, {
      any: (req) =>
        unknownRequest !== '' && req.url.includes(`/request-status/${unknownRequest}`)
          ? { status: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"No query results for the requested resource."}' }
          : undefined,
      resultUrl: (text, original) => (text === 'the credits' ? `${storage.url}/credits.wav?sig=abc` : original),
    });
    servers.push(storage, proxy);
    const through = { ...sim, url: proxy.url } as Simulator;
    const manifest = path.join(workspace.dir, 'show.yaml');
    await writeFile(manifest, speechManifest([{ id: 'intro', text: 'the intro' }, { id: 'outro', text: 'the outro' }, { id: 'credits', text: 'the credits' }]));
    // The CLI's main in this process: its words and exit codes, without a start-up for each command.
    expect((await mainAgainst(through, ['run', manifest, '--no-wait'])).code).toBe(1);
    const ledger = path.join(workspace.dir, 'show.mediabatch.db');
    const requests = new Map((await ledgerRows(ledger)).map((row) => [row.id, row.request_id]));
    const requestOf = (id: string): string => requests.get(id) ?? '?';
    unknownRequest = requestOf('outro');

    const run = await mainAgainst(through, ['run', manifest, '--json']);
    expect(run.code, run.stderr).toBe(1);
    // The command to paste is the one given, every option included.
    const again = `run the same command again to collect them: mediabatch run ${manifest} --json ${simArgs(through).join(' ')}`;
    expect(run.stderr).toContain(
      `1 job(s) done at the service (paid for) but the result not collected: credits (request ${requestOf('credits')}): the result is not audio: its bytes are an HTML page, Content-Type text/html. ${again}`,
    );
    expect(run.stderr).toContain(
      `1 job(s) whose status is unknown: outro (request ${unknownRequest}): the service does not know request ${unknownRequest} (404). ${again}`,
    );
    expect(run.stderr).not.toContain('still running');

    const status = await mainInProcess(['status', manifest, '--json']);
    const jobs = new Map((JSON.parse(status.stdout) as StatusDoc).jobs.map((job) => [job.id, job]));
    expect(jobs.get('intro')).toMatchObject({ state: 'done' });
    expect(jobs.get('outro')).toMatchObject({
      state: 'submitted',
      request_id: unknownRequest,
      collect_issue: 'status_unknown',
      error: `the service does not know request ${unknownRequest} (404)`,
    });
    expect(jobs.get('credits')).toMatchObject({ state: 'submitted', request_id: requestOf('credits'), collect_issue: 'not_collected' });
    const text = await mainInProcess(['status', manifest]);
    expect(text.stdout).toContain('Status unknown: 1 job(s)');
    expect(text.stdout).toContain('Paid, result not collected: 1 job(s)');
    expect(text.stdout).not.toContain('still running');
    expect(sim.stats.accepted).toHaveLength(3);
  });

  it('a job whose status was unknown, seen running by a later run, is "still running" again', async () => {
    // Slow jobs: still processing when the run stops waiting for them.
    const sim = await workspace.startSim({ pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 60_000, img2video: 60_000 } });
    let lost = true;
    const proxy = await startProxy(sim.url, {
      any: (req) => (lost && req.url.includes('/request-status/') ? { status: 404, body: '{"message":"No query results for the requested resource."}' } : undefined),
    });
    servers.push(proxy);
    const dir = workspace.dir;
    const manifest = path.join(dir, 'slow.yaml');
    await writeFile(manifest, speechManifest([{ id: 'long-read', text: 'a long read' }]));
    const schedule = { firstMs: 20, maxMs: 40, factor: 1.5, giveUpMs: 10 };
    const run = () =>
      runInProcess({
        manifest,
        ledgerPath: path.join(dir, 'slow.mediabatch.db'),
        outDir: path.join(dir, 'slow.out'),
        baseUrl: proxy.url,
        token: sim.token,
        options: { poll: uniformPoll(schedule) },
      });
    const outcome = async () => {
      const ledger = await openSqliteLedger(path.join(dir, 'slow.mediabatch.db'), { mode: 'read-only' });
      try {
        return (await ledger.readJobs({ scope: 'all', limit: 1000 })).map((job) => [job.state, job.issue, job.lastError]);
      } finally {
        await ledger.close();
      }
    };
    await run();
    expect(await outcome()).toEqual([['submitted', 'status_unknown', expect.stringMatching(/^the service does not know request [0-9a-f-]{36} \(404\)$/)]]);
    lost = false;
    const events = await run();
    expect(events.filter((e) => e.kind === 'still_running')).toHaveLength(1);
    expect(await outcome()).toEqual([['submitted', null, null]]);
    expect(sim.stats.accepted).toHaveLength(1);
  });
});
