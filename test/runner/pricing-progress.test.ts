import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { startPricingTicker } from '../../src/cli/progress.js';
import { openManifest } from '../../src/manifest/open.js';
import { Pace, planPace } from '../../src/runner/pace.js';
import { createRunProgress, estimate, limitsOf } from '../../src/runner/index.js';
import { useWorkspace } from '../helpers/workspace.js';
import { systemClock } from '../../src/clock.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

/** One speech job per voice: each is a price group of its own, so one price call each. */
const VOICES = ['af_sky', 'af_bella', 'am_adam', 'bf_emma', 'bm_george'];

describe('pricing that takes long says how far it is and what it waits for', () => {
  const workspace = useWorkspace();

  it("counts the price calls as they go, and names the plan's price pace while it holds them", async () => {
    const sim = await workspace.startSim();
    const file = path.join(workspace.dir, 'voices.yaml');
    const jobs = VOICES.map((voice) => `  - { id: ${voice}, type: txt2audio, text: "Hello from ${voice}.", voice: ${voice}, lang: ${voice.startsWith('b') ? 'en-gb' : 'en-us'} }`);
    await writeFile(file, ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, speed: 1, format: mp3, sample_rate: 24000 }', 'jobs:', ...jobs, ''].join('\n'));
    const ledger = openMemoryLedger();
    const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
    const basic = { limits: limitsOf('basic'), name: 'basic' };
    const progress = createRunProgress();
    const lines: string[] = [];
    const ticker = startPricingTicker({ progress: progress.pricing, plan: basic, print: (line) => lines.push(line), clock: systemClock, intervalMs: 20 });
    try {
      const report = await estimate({
        manifest: await openManifest(file),
        ledger,
        service: { client, baseUrl: sim.url },
        plan: 'basic',
        // Basic's price pace (50 a minute) with its minute scaled down to 3 s: 60 ms between calls.
        pace: new Pace(planPace(basic.limits, 3_000)),
        progress,
        onEvent: (event) => ticker.onEvent(event),
      });
      expect(report.report.priceCalls).toBe(VOICES.length);
    } finally {
      ticker.stop();
      await client.close();
      await ledger.close();
    }
    expect(progress.pricing).toEqual({ jobsRead: VOICES.length, planned: VOICES.length, answered: VOICES.length, waitingForPace: 0, waitingForAnswer: 0 });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] (pricing: [0-5]\/[0-5] price calls answered|preparing: )/);
    expect(lines.some((line) => line.endsWith('; waiting for the price pace (Basic: 50/min, 200/day)'))).toBe(true);
  });
});
