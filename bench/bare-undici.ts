import { Agent, request } from 'undici';
import { startSimulator } from '../src/sim/index.js';
import { VOICES } from './jobs.js';

/**
 * The floor this machine allows: the same submits the runner sends, from a loop that does
 * nothing else (no ledger, no validation, no pacing), over undici at the same concurrency.
 * `textOf(i)` gives job i's text, the same the runner's manifest holds.
 */
export async function bareUndiciSubmits(jobs: number, concurrency: number, textOf: (i: number) => string): Promise<{ jobs: number; wallMs: number; jobsPerSecond: number }> {
  const sim = await startSimulator({ plan: 'unlimited' });
  const agent = new Agent({ connections: concurrency });
  try {
    let next = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      for (let i = next++; i < jobs; i = next++) {
        const { statusCode, body } = await request(`${sim.url}/api/v1/client/txt2audio`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${sim.token}`, accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify({ text: textOf(i), model: 'Kokoro', voice: VOICES[i % VOICES.length], lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 }),
        });
        await body.text();
        if (statusCode !== 200) throw new Error(`bare loop: HTTP ${statusCode}`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = performance.now() - started;
    return { jobs, wallMs, jobsPerSecond: jobs / (wallMs / 1000) };
  } finally {
    await agent.close();
    await sim.close();
  }
}
