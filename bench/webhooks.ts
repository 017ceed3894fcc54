import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createServiceClient } from '../src/api/client.js';
import { planLimits } from '../src/jobs/plans.js';
import { openManifest } from '../src/manifest/open.js';
import { simulatorPoll } from '../src/runner/context.js';
import { run } from '../src/runner/index.js';
import { Pace, planPace } from '../src/runner/pace.js';
import { startSimulator } from '../src/sim/index.js';
import { openSqliteLedger } from '../src/store/index.js';

/** One Basic-plan day of speech submits. */
const JOBS = 300;
/** Basic's minute, scaled down; the counts per window and per day stay. */
const WINDOW_MS = 60;

export interface WebhookFigures {
  jobs: number;
  /** Status calls the plan allows a day. */
  statusPerDay: number;
  polling: { statusCalls: number; done: number };
  webhooks: { statusCalls: number; done: number; deliveries: number };
}

/**
 * Status calls needed to follow one Basic-plan day of speech jobs (300), by polling and by
 * webhooks, against the simulator enforcing Basic with its minute scaled down. The polling run
 * is allowed as many status calls as it asks for, to count them; the webhook run keeps Basic's
 * 200 a day. The runner sends 4 speech submits a window, not 5: a window it fills makes its pace
 * wait a whole second (X-RateLimit-Remaining 0); that changes when jobs are sent, not how they are followed.
 */
export async function webhookStatusCalls(dir: string): Promise<WebhookFigures> {
  const polling = await followRun(path.join(dir, 'polling'), false);
  const webhooks = await followRun(path.join(dir, 'webhooks'), true);
  return { jobs: JOBS, statusPerDay: planLimits('basic').status.perDay ?? 0, polling, webhooks };
}

async function followRun(dir: string, hooked: boolean): Promise<{ statusCalls: number; done: number; deliveries: number }> {
  const sim = await startSimulator({
    plan: 'basic',
    rateWindowMs: WINDOW_MS,
    ...(hooked ? {} : { rateLimits: { status: { perWindow: 50 } } }),
  });
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'basic.yaml');
  const jobs = Array.from({ length: JOBS }, (_, i) => `  - { id: b${i}, type: txt2audio, text: "basic plan job ${i}" }`);
  await writeFile(file, ['version: 1', 'defaults:', '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }', 'jobs:', ...jobs, ''].join('\n'));
  const ledger = await openSqliteLedger(path.join(dir, 'basic.mediabatch.db'), { mode: 'read-write' });
  const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
  try {
    const { summary } = await run({
      manifest: await openManifest(file),
      ledger,
      service: { client, baseUrl: sim.url },
      files: { db: path.join(dir, 'basic.mediabatch.db'), out: path.join(dir, 'out'), runJson: path.join(dir, 'basic.run.json'), runCsv: path.join(dir, 'basic.run.csv'), legacyReport: path.join(dir, 'basic.report.json') },
      pace: new Pace({ ...planPace(planLimits('basic'), WINDOW_MS), 'submit:txt2audio': { perWindow: 4, windowMs: WINDOW_MS } }),
      poll: { schedules: simulatorPoll() },
      webhooks: hooked ? { url: 'https://hooks.example.test/bench', listen: { host: '127.0.0.1', port: 0 }, silenceMs: 30_000 } : undefined,
      onEvent: (event) => {
        if (event.kind === 'webhooks_listening') sim.setWebhookTarget(`http://${event.address}`);
      },
    });
    return { statusCalls: sim.stats.calls.status, done: summary.counts.done, deliveries: sim.stats.webhooks.delivered };
  } finally {
    await client.close();
    await ledger.close();
    await sim.close();
  }
}
