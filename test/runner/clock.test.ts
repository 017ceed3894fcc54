import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockFrom } from '../helpers/clock.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';
import { byState, ledgerRows } from '../reliability/helpers.js';
import { speechManifest } from '../security/servers.js';

const FAST = { pendingMs: { txt2audio: 10 }, processingMs: { txt2audio: 20 } };

describe("the run's clock", () => {
  const workspace = useWorkspace();

  it('a daily limit met at 23:30 UTC pauses until the reset half an hour later, on the clock the run was given', async () => {
    // The simulator and the run share a clock that reads 23:30 UTC, whatever the real hour.
    const clock = clockFrom('2026-11-27T23:30:00Z');
    const sim = await workspace.startSim({ ...FAST, clock, rateLimits: { 'submit:txt2audio': { perWindow: 1000, perDay: 2 } } });
    const manifest = path.join(workspace.dir, 'late.yaml');
    await writeFile(manifest, speechManifest([1, 2, 3, 4].map((i) => ({ id: `clip-${i}`, text: `late ${i}` }))));
    const ledgerPath = path.join(workspace.dir, 'late.mediabatch.db');
    // The run's decisions are the point, not its file.
    const ledger = openMemoryLedger();
    const events = await runInProcess({ manifest, ledgerPath, ledger, outDir: path.join(workspace.dir, 'late.out'), baseUrl: sim.url, token: sim.token, noWait: true, clock });

    const pauses = events.filter((e) => e.kind === 'paused');
    expect(pauses).toEqual([expect.objectContaining({ what: 'submit:txt2audio', reason: 'the daily limit' })]);
    // The service's Retry-After is whole seconds, rounded up: the pause ends at most a second past the reset.
    const resetMs = Date.parse('2026-11-28T00:00:00Z');
    const untilMs = pauses[0]?.kind === 'paused' ? pauses[0].untilMs : 0;
    expect(untilMs).toBeGreaterThanOrEqual(resetMs);
    expect(untilMs).toBeLessThanOrEqual(resetMs + 2_000);
    expect(byState(await ledgerRows(ledger))).toEqual({ submitted: 2, pending: 2 });
  });
});
