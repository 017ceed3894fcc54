import path from 'node:path';
import { createServiceClient } from '../src/api/client.js';
import { openManifest } from '../src/manifest/open.js';
import type { Pace } from '../src/runner/pace.js';
import { run } from '../src/runner/index.js';
import type { Simulator } from '../src/sim/index.js';
import { openSqliteLedger } from '../src/store/index.js';

/** `run --no-wait` of `manifest` in this process against `sim`, at `pace`; its files go to `dir`. */
export async function noWaitRun(dir: string, manifest: string, sim: Simulator, pace: Pace): Promise<void> {
  const name = path.basename(manifest, '.yaml');
  const db = path.join(dir, `${name}.mediabatch.db`);
  const ledger = await openSqliteLedger(db, { mode: 'read-write' });
  const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
  try {
    await run({
      manifest: await openManifest(manifest),
      ledger,
      service: { client, baseUrl: sim.url },
      files: {
        db,
        out: path.join(dir, `${name}.out`),
        runJson: path.join(dir, `${name}.run.json`),
        runCsv: path.join(dir, `${name}.run.csv`),
        legacyReport: path.join(dir, `${name}.report.json`),
      },
      pace,
      noWait: true,
    });
  } finally {
    await client.close();
    await ledger.close();
  }
}
