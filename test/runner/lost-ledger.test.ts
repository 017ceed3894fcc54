import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRACES_OF_THIS_LEDGER } from '../../src/runner/lost-ledger.js';
import { runInProcess } from '../helpers/in-process.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST } from '../reliability/helpers.js';
import { speechManifest } from '../security/servers.js';

/** What a run leaves beside its ledger just before its first submit: the trace, finished: false. */
const TRACE = JSON.stringify({ kind: 'run', finished: false, counts: { pending: 1 }, jobs: [{ id: 'intro', state: 'pending', request_id: null }] });

describe('the lost-ledger guard and a run killed between its trace and its first submit', () => {
  const workspace = useWorkspace();

  async function setUp(traceIsTheLedgers: boolean, trace = TRACE) {
    const sim = await workspace.startSim(FAST);
    const manifest = path.join(workspace.dir, 'show.yaml');
    await writeFile(manifest, speechManifest([{ id: 'intro', text: 'hello' }]));
    const ledgerPath = path.join(workspace.dir, 'show.mediabatch.db');
    const outDir = path.join(workspace.dir, 'show.out');
    await writeFile(`${outDir}.run.json`, trace);
    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-write' });
    if (traceIsTheLedgers) await ledger.setMeta(TRACES_OF_THIS_LEDGER, 'yes');
    await ledger.close();
    return { sim, run: () => runInProcess({ manifest, ledgerPath, outDir, baseUrl: sim.url, token: sim.token }) };
  }

  it('trusts a ledger that wrote the trace itself and says nothing was sent: the run sends, once', async () => {
    const { sim, run } = await setUp(true);
    await run();
    expect(sim.stats.accepted).toHaveLength(1);
  });

  it('still refuses a ledger that did not write the trace beside it (a lost ledger made anew)', async () => {
    const { sim, run } = await setUp(false);
    await expect(run()).rejects.toThrow(/no ledger with jobs at .*says a run started sending requests/);
    expect(sim.stats.accepted).toHaveLength(0);
  });

  it('counts a blocked job of a finished run as never sent: nothing there says a request left', async () => {
    const blocked = { kind: 'run', finished: true, counts: { blocked: 1 }, jobs: [{ id: 'intro', state: 'blocked', request_id: null }] };
    const { sim, run } = await setUp(false, JSON.stringify(blocked));
    await run();
    expect(sim.stats.accepted).toHaveLength(1);
  });
});
