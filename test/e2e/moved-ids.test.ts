import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { ROW_NUMBERED_MANIFEST } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, mainAgainst } from '../reliability/helpers.js';

describe('ids that moved between runs', () => {
  const workspace = useWorkspace();

  it('estimate and run both refuse (exit 2) a row inserted above rows numbered by {n}, naming the ids and the way out', async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = path.join(workspace.dir, 'lines.yaml');
    const csv = path.join(workspace.dir, 'lines.csv');
    await writeFile(manifest, ROW_NUMBERED_MANIFEST);
    await writeFile(csv, 'text\nthe first line\nthe second line\n');
    // The CLI's main in this process: a refusal's exit 2 through a process is bad-input.test.ts's.
    expect((await mainAgainst(sim, ['run', manifest])).code).toBe(0);
    await writeFile(csv, 'text\na new first line\nthe first line\nthe second line\n');

    const hint =
      'ids from a row number ({n}) shift when a row is inserted: give the rows ids of their own (an id column keeping the ids already run), or add new rows at the end';
    for (const command of ['estimate', 'run']) {
      const result = await mainInProcess([command, manifest, '--base-url', sim.url, '--plan', 'unlimited'], { MEDIABATCH_TOKEN: sim.token });
      expect(result.code, result.stderr).toBe(2);
      expect(hasStackTrace(result.stderr)).toBe(false);
      expect(result.stderr).toContain(
        `job "row-2" id: expected an id that keeps its content between runs, got "row-2", whose content "row-1" was already sent with (done); ${hint}`,
      );
      expect(result.stderr).toContain(`job "row-3" id: expected an id that keeps its content between runs, got "row-3", whose content "row-2" was already sent with (done)`);
      expect(result.stderr).toContain('2 problems in');
      expect(result.stderr).toContain('nothing was sent.');
    }
    expect(sim.stats.accepted).toHaveLength(2);
  });
});
