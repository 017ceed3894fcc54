import { createServiceClient } from '../../src/api/client.js';
import { loadManifest } from '../../src/manifest/load.js';
import { createRunContext, DEFAULT_RETRY, simulatorPoll, type RunContext, type RunEvent } from '../../src/runner/context.js';
import { Pace } from '../../src/runner/pace.js';
import { runManifest } from '../../src/runner/run.js';
import { openTestLedger } from './ledger.js';

export interface InProcessRun {
  manifest: string;
  ledgerPath: string;
  outDir: string;
  baseUrl: string;
  token: string;
  pace?: Pace;
  options?: Partial<RunContext['options']>;
}

/**
 * `run` without the CLI, for settings the CLI does not offer (a tiny retry wait, a size limit
 * in bytes): the real client, ledger (opened for a run, with its writer thread) and runner.
 * Returns the events it emitted.
 */
export async function runInProcess(input: InProcessRun): Promise<RunEvent[]> {
  const ledger = await openTestLedger(input.ledgerPath, { mode: 'run' });
  const client = createServiceClient({ baseUrl: input.baseUrl, token: input.token });
  const halt = new AbortController();
  const events: RunEvent[] = [];
  try {
    const ctx = createRunContext({
      client,
      ledger,
      pace: input.pace ?? new Pace({}),
      options: {
        concurrency: 4,
        budgetMicro: null,
        noWait: false,
        resubmitInDoubt: false,
        outDir: input.outDir,
        poll: simulatorPoll(),
        retry: { ...DEFAULT_RETRY, minDelayMs: 10, maxDelayMs: 50 },
        maxResultBytes: 1e7,
        ...input.options,
      },
      stop: halt.signal,
      emit: (event) => events.push(event),
    });
    const manifest = await loadManifest(input.manifest);
    await runManifest({ manifest, ctx, baseUrl: input.baseUrl, partial: false, userStop: halt.signal, halt });
  } finally {
    await client.close();
    await ledger.close();
  }
  return events;
}
