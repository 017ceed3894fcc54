import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startSimulator } from '../src/sim/index.js';
import { benchText, VOICES } from './jobs.js';

export interface BareResult {
  jobs: number;
  wallMs: number;
  jobsPerSecond: number;
}

/**
 * The floor this machine allows: the same submits the runner sends, from a loop that does
 * nothing else (no ledger, no validation, no pacing), over undici at the same concurrency.
 * Job i's text is `benchText(i)`, the same the runner's manifest holds.
 */
export async function bareLoop(url: string, token: string, jobs: number, concurrency: number): Promise<BareResult> {
  const agent = new Agent({ connections: concurrency });
  try {
    let next = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      for (let i = next++; i < jobs; i = next++) {
        const { statusCode, body } = await request(`${url}/api/v1/client/txt2audio`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify({ text: benchText(i), model: 'Kokoro', voice: VOICES[i % VOICES.length], lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 }),
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
  }
}

/**
 * The loop twice, each against a fresh simulator in this process: once in this process (client
 * and server share one thread), once from a child process (as the CLI runs). The faster is the floor.
 */
export async function bareUndiciSubmits(jobs: number, concurrency: number): Promise<{ inProcess: BareResult; childProcess: BareResult }> {
  const inProcess = await withSimulator((url, token) => bareLoop(url, token, jobs, concurrency));
  const childProcess = await withSimulator((url, token) => bareLoopInChild(url, token, jobs, concurrency));
  return { inProcess, childProcess };
}

async function withSimulator<T>(use: (url: string, token: string) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ plan: 'unlimited' });
  try {
    return await use(sim.url, sim.token);
  } finally {
    await sim.close();
  }
}

// The token goes through the environment, as it does for the CLI: never in process arguments.
function bareLoopInChild(url: string, token: string, jobs: number, concurrency: number): Promise<BareResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), url, String(jobs), String(concurrency)], {
      env: { ...process.env, BARE_TOKEN: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as BareResult) : reject(new Error(`bare loop child exited with ${code}`))));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url = '', jobs = '0', concurrency = '1'] = process.argv.slice(2);
  const result = await bareLoop(url, process.env['BARE_TOKEN'] ?? '', Number(jobs), Number(concurrency));
  process.stdout.write(JSON.stringify(result));
}
