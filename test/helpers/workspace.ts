import { afterEach, beforeEach } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../src/sim/index.js';
import { tempDir } from './cli.js';

export interface Workspace {
  /** A fresh temporary folder for the current test. */
  readonly dir: string;
  /** Starts a simulator that is closed after the current test, whatever happens in it. */
  startSim(options?: SimOptions): Promise<Simulator>;
}

/**
 * Per test: a fresh folder, removed afterwards, and every simulator the test started, closed
 * afterwards (an open keep-alive socket is what hangs a vitest run). Call it in a describe.
 */
export function useWorkspace(): Workspace {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  const sims: Simulator[] = [];
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    for (const sim of sims.splice(0)) await sim.close();
    await cleanup();
  });
  return {
    get dir() {
      return dir;
    },
    startSim: async (options) => {
      const sim = await startSimulator(options);
      sims.push(sim);
      return sim;
    },
  };
}

/**
 * A workspace of one test, for tests that run side by side (describe.concurrent), which cannot
 * share useWorkspace's: pass the test context's onTestFinished, which removes and closes it.
 */
export async function ownWorkspace(onTestFinished: (cleanup: () => Promise<void>) => void): Promise<Workspace> {
  const { dir, cleanup } = await tempDir();
  const sims: Simulator[] = [];
  onTestFinished(async () => {
    for (const sim of sims.splice(0)) await sim.close();
    await cleanup();
  });
  return {
    dir,
    startSim: async (options) => {
      const sim = await startSimulator(options);
      sims.push(sim);
      return sim;
    },
  };
}
