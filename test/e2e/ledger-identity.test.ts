import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, ledgerRows, mainAgainst } from '../reliability/helpers.js';
import { speechManifest } from '../security/servers.js';

/** Which manifest a ledger belongs to: one ledger never serves two manifests. */
describe('a ledger belongs to its manifest', () => {
  const workspace = useWorkspace();
  let sim: Simulator;
  let dir: string;

  beforeEach(async () => {
    dir = workspace.dir;
    sim = await workspace.startSim({ ...FAST });
  });

  const write = async (file: string, names: string[]) =>
    writeFile(file, speechManifest(names.map((name) => ({ id: name, text: `text of ${name}` }))));

  it('a.yml beside a.yaml: the ledger a.yaml made is refused, nothing is sent, a.yaml’s results are untouched', async () => {
    const yaml = path.join(dir, 'a.yaml');
    const yml = path.join(dir, 'a.yml');
    await write(yaml, ['one', 'two']);
    await write(yml, ['three', 'four']);
    expect((await mainAgainst(sim, ['run', yaml])).code).toBe(0);

    const estimate = ['estimate', yml, '--base-url', sim.url, '--plan', 'unlimited'];
    const refusals = [await mainAgainst(sim, ['run', yml]), await mainInProcess(estimate, { MEDIABATCH_TOKEN: sim.token })];
    for (const other of refusals) {
      expect(other.code, other.stderr).toBe(4);
      expect(hasStackTrace(other.stderr)).toBe(false);
      expect(other.stderr).toContain(
        `the ledger ${path.join(dir, 'a.mediabatch.db')} belongs to the manifest ${yaml}, not to ${yml}: give this manifest a ledger of its own with --db PATH (its results folder and reports take that ledger's name)`,
      );
    }
    // The one spawn: the built program refuses it and exits 4.
    const status = await runCli(['status', yml]);
    expect(status.code, status.stderr).toBe(4);
    expect(status.stderr).toMatch(/belongs to the manifest .*a\.yaml, not to .*a\.yml/);

    expect(sim.stats.accepted).toHaveLength(2);
    expect(readdirSync(path.join(dir, 'a.out')).sort()).toEqual(['one.wav', 'two.wav']);
    // With a ledger of its own, a.yml runs; its results folder and reports take the ledger's name.
    const own = await mainAgainst(sim, ['run', yml, '--db', path.join(dir, 'a-yml.mediabatch.db')]);
    expect(own.code, own.stderr).toBe(0);
    expect(sim.stats.accepted).toHaveLength(4);
    expect(readdirSync(path.join(dir, 'a-yml.out')).sort()).toEqual(['four.wav', 'three.wav']);
    expect(readdirSync(path.join(dir, 'a.out')).sort()).toEqual(['one.wav', 'two.wav']);
    expect(existsSync(path.join(dir, 'a-yml.run.json'))).toBe(true);
  });

  it('--db pointing at another manifest’s ledger is refused', async () => {
    mkdirSync(path.join(dir, 'book'));
    mkdirSync(path.join(dir, 'promo'));
    const book = path.join(dir, 'book', 'batch.yaml');
    const promo = path.join(dir, 'promo', 'batch.yaml');
    await write(book, ['chapter-1']);
    await write(promo, ['spot-1']);
    expect((await mainAgainst(sim, ['run', book])).code).toBe(0);

    const wrong = await mainAgainst(sim, ['run', promo, '--db', path.join(dir, 'book', 'batch.mediabatch.db')]);
    expect(wrong.code, wrong.stderr).toBe(4);
    expect(wrong.stderr).toMatch(/belongs to the manifest .*book\/batch\.yaml, not to .*promo\/batch\.yaml/);
    expect(sim.stats.accepted).toHaveLength(1);
    expect(existsSync(path.join(dir, 'promo', 'batch.out'))).toBe(false);
  });

  it('a project folder moved elsewhere: the ledger follows its manifest and the run resumes', async () => {
    const first = path.join(dir, 'first');
    mkdirSync(first);
    await write(path.join(first, 'batch.yaml'), ['one', 'two']);
    expect((await mainAgainst(sim, ['run', path.join(first, 'batch.yaml'), '--no-wait'])).code).toBe(1);
    const moved = path.join(dir, 'moved');
    cpSync(first, moved, { recursive: true });
    rmSync(first, { recursive: true });

    const resumed = await mainAgainst(sim, ['run', path.join(moved, 'batch.yaml')]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await ledgerRows(path.join(moved, 'batch.mediabatch.db'))).map((r) => r.state)).toEqual(['done', 'done']);
    expect(sim.stats.accepted).toHaveLength(2);
  });
});
