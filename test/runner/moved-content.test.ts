import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/manifest/errors.js';
import { runInProcess } from '../helpers/in-process.js';
import { ROW_NUMBERED_MANIFEST as MANIFEST } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';
import { FAST, ledgerRows } from '../reliability/helpers.js';


describe('content that moves between ids is never paid for twice', () => {
  const workspace = useWorkspace();

  it('a row inserted above rows numbered by {n}: refused before anything is sent, naming each id and the id its content was sent as', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    const manifest = path.join(dir, 'lines.yaml');
    const csv = path.join(dir, 'lines.csv');
    await writeFile(manifest, MANIFEST);
    await writeFile(csv, 'text\nthe first line\nthe second line\nthe third line\n');
    const ledgerPath = path.join(dir, 'lines.mediabatch.db');
    // What the runner refuses is the point, not the file: each run reads the ledger the last one left.
    const ledger = openMemoryLedger();
    const run = (select?: { redo: string[] }) =>
      runInProcess({ manifest, ledgerPath, ledger, outDir: path.join(dir, 'lines.out'), baseUrl: sim.url, token: sim.token, select });
    await run();
    expect(sim.stats.accepted).toHaveLength(3);

    await writeFile(csv, 'text\na new first line\nthe first line\nthe second line\nthe third line\n');
    const refused = await run().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ManifestError);
    const issues = (refused as ManifestError).issues.map((issue) => [issue.jobId, issue.got]);
    expect(issues).toEqual([
      ['row-2', '"row-2", whose content "row-1" was already sent with (done)'],
      ['row-3', '"row-3", whose content "row-2" was already sent with (done)'],
      ['row-4', '"row-4", whose content "row-3" was already sent with (done)'],
    ]);
    expect(sim.stats.accepted).toHaveLength(3);
    // Nothing of that reading was kept: the ledger is the one the first run left.
    expect((await ledgerRows(ledger)).map((row) => [row.id, row.state])).toEqual([
      ['row-1', 'done'],
      ['row-2', 'done'],
      ['row-3', 'done'],
    ]);

    // New rows at the end move nothing; a done job redone on purpose is sent again.
    await writeFile(csv, 'text\nthe first line\nthe second line\nthe third line\na new last line\n');
    await run({ redo: ['row-2'] });
    expect(sim.stats.accepted).toHaveLength(5);
    expect((await ledgerRows(ledger)).map((row) => [row.id, row.state])).toEqual([
      ['row-1', 'done'],
      ['row-2', 'done'],
      ['row-3', 'done'],
      ['row-4', 'done'],
    ]);
  });
});
