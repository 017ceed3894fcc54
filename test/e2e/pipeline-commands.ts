import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import type { Simulator } from '../../src/sim/index.js';
import { ROOT, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { mainAgainst } from '../reliability/helpers.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/manifests');

/**
 * A command against the simulator through the CLI's main in this process (a spawn shows only the
 * process's exit); `run` also gets the quick pace and polls of `mainAgainst`.
 */
export function against(sim: Simulator, args: string[]): Promise<Pick<CliResult, 'code' | 'stdout' | 'stderr'>> {
  if (args[0] === 'run') return mainAgainst(sim, args);
  return mainInProcess([...args, '--base-url', sim.url], { MEDIABATCH_TOKEN: sim.token });
}

/** Copies a fixture manifest into the test's folder, where its ledger and results then go. */
export async function fixture(dir: string, name: string): Promise<string> {
  const file = path.join(dir, path.basename(name));
  await copyFile(path.join(FIXTURES, name), file);
  return file;
}
