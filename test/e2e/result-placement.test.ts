import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { wavTone } from '../../src/sim/results.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, ledgerRows, mainAgainst } from '../reliability/helpers.js';
import { speechManifest } from '../security/servers.js';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('run: a result never replaces a file mediabatch did not write', () => {
  const workspace = useWorkspace();

  it("keeps a person's own file byte for byte and saves the result beside it; takes a file with the result's bytes as the result", async () => {
    const sim = await workspace.startSim({ ...FAST });
    const dir = workspace.dir;
    const manifest = path.join(dir, 'show.yaml');
    await writeFile(manifest, speechManifest(['intro', 'outro', 'credits'].map((id) => ({ id, text: `the ${id} of the show` }))));
    // Sent first; the results are collected by the next run, after the folder was touched.
    // The CLI's main in this process: what it writes and says, without a start-up for each run.
    expect((await mainAgainst(sim, ['run', manifest, '--no-wait'])).code).toBe(1);
    const out = path.join(dir, 'show.out');
    await mkdir(out, { recursive: true });
    const mine = Buffer.from('my own recording of the intro, not to be lost');
    await writeFile(path.join(out, 'intro.wav'), mine);
    // The simulator's result, already there (as after a crash between the move and the ledger's commit).
    const result = wavTone();
    await writeFile(path.join(out, 'outro.wav'), result);
    await writeFile(path.join(out, 'credits.wav'), 'mine too');
    await writeFile(path.join(out, 'credits~2.wav'), 'and this one');

    const run = await mainAgainst(sim, ['run', manifest]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path.join(out, 'intro.wav'))).toEqual(mine);
    expect(readFileSync(path.join(out, 'intro~2.wav'))).toEqual(result);
    expect(run.stderr).toContain(`warning: job "intro": ${path.join(out, 'intro.wav')} was not written by mediabatch, so it is kept as it is; the result is saved as ${path.join(out, 'intro~2.wav')}`);
    expect(readFileSync(path.join(out, 'credits.wav'), 'utf8')).toBe('mine too');
    expect(readFileSync(path.join(out, 'credits~2.wav'), 'utf8')).toBe('and this one');
    expect(readFileSync(path.join(out, 'credits~3.wav'))).toEqual(result);
    expect(run.stderr).not.toContain('job "outro"');
    expect(readdirSync(out).sort()).toEqual(['credits.wav', 'credits~2.wav', 'credits~3.wav', 'intro.wav', 'intro~2.wav', 'outro.wav']);

    const rows = await ledgerRows(path.join(dir, 'show.mediabatch.db'));
    expect(rows.map((r) => [r.id, r.state, r.result_path])).toEqual([
      ['intro', 'done', path.join(out, 'intro~2.wav')],
      ['outro', 'done', path.join(out, 'outro.wav')],
      ['credits', 'done', path.join(out, 'credits~3.wav')],
    ]);
    expect(sha256(readFileSync(path.join(out, 'outro.wav')))).toBe(sha256(result));
  });
});
