import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/runner/context.js';
import { pngImage } from '../../src/sim/results.js';
import type { Simulator } from '../../src/sim/index.js';
import { mulberry32 } from '../../src/sim/timers.js';
import { openSqliteLedger } from '../../src/store/index.js';
import { estimateInProcess, runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { startWebhookRun } from '../webhooks/helpers.js';

const DEFAULTS = [
  'defaults:',
  '  txt2img: { model: Flux1schnell, width: 512, height: 512, steps: 4, guidance: 0, seed: 1 }',
  '  img2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30,',
  '    guidance: 0, seed: 42 }',
  '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: mp3, sample_rate: 24000 }',
  '  img2txt: { model: Nanonets_Ocr_S_F16 }',
  '  img-upscale: { model: RealESRGAN_x4plus }',
];

/** A POST's body as it reached the service, by path. */
interface Upload {
  path: string;
  body: Buffer;
}

/** A proxy in front of the simulator that keeps every POST body: what was uploaded, byte for byte. */
async function recordingProxy(target: string): Promise<{ url: string; uploads: Upload[]; server: Server }> {
  const uploads: Upload[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (request.method === 'POST') uploads.push({ path: request.url ?? '', body });
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const init = { method: request.method ?? 'GET', headers, body: request.method === 'GET' ? undefined : body };
      void fetch(`${target}${request.url ?? ''}`, init).then(async (answer) => {
        const framing = ['content-length', 'transfer-encoding', 'connection', 'content-encoding'];
        const kept = [...answer.headers].filter(([name]) => !framing.includes(name));
        response.writeHead(answer.status, Object.fromEntries(kept));
        response.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, uploads, server };
}

/** Image and video jobs that end at once. */
const QUICK = { txt2img: 20, img2video: 20 };
const serviceOf = (sim: Simulator) => ({ baseUrl: sim.url, token: sim.token });

const indexOf = (events: readonly RunEvent[], kind: RunEvent['kind'], id: string): number =>
  events.findIndex((event) => event.kind === kind && 'id' in event && event.id === id);

describe('pipelines: a job takes another job\'s result', () => {
  const workspace = useWorkspace();
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  async function manifestOf(jobs: readonly string[]): Promise<string> {
    const file = path.join(workspace.dir, 'pipe.yaml');
    await writeFile(path.join(workspace.dir, 'page.png'), pngImage(96));
    await writeFile(file, `${['version: 1', ...DEFAULTS, 'jobs:', ...jobs.map((job) => `  - ${job}`)].join('\n')}\n`);
    return file;
  }

  const paths = () => ({
    ledgerPath: path.join(workspace.dir, 'pipe.mediabatch.db'),
    outDir: path.join(workspace.dir, 'out'),
  });

  it('sends the video as soon as its image is done, while a slower job runs, uploading the image as it was downloaded', async () => {
    const sim = await workspace.startSim({ pendingMs: { txt2audio: 1000, ...QUICK }, processingMs: QUICK });
    const proxy = await recordingProxy(sim.url);
    servers.push(proxy.server);
    const manifest = await manifestOf([
      '{ id: narration, type: txt2audio, text: "The lighthouse has stood here for two hundred years." }',
      '{ id: poster, type: txt2img, prompt: "a lighthouse at dusk" }',
      '{ id: poster-moving, type: img2video, prompt: "waves break", first_frame_image: { from: poster } }',
    ]);
    const { ledgerPath, outDir } = paths();
    const events = await runInProcess({ manifest, ledgerPath, outDir, baseUrl: proxy.url, token: sim.token });

    // No stage barrier: the video went out before the unrelated narration was done.
    expect(indexOf(events, 'submitting', 'poster-moving')).toBeGreaterThan(indexOf(events, 'done', 'poster'));
    expect(indexOf(events, 'submitting', 'poster-moving')).toBeLessThan(indexOf(events, 'done', 'narration'));
    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
    try {
      expect(await ledger.countsByState()).toMatchObject({ done: 3 });
      const poster = await ledger.getJob('poster');
      const image = await readFile(poster?.resultPath ?? '');
      const sent = proxy.uploads.filter((upload) => upload.path.endsWith('/img2video'));
      expect(sent).toHaveLength(1);
      expect(sent[0]?.body.includes(image)).toBe(true);
    } finally {
      await ledger.close();
    }
  });

  it('speaks the text another job read, priced at the model\'s longest text until then, and spends its real price', async () => {
    const sim = await workspace.startSim({ processingMs: { img2txt: 20, txt2audio: 20 } });
    const proxy = await recordingProxy(sim.url);
    servers.push(proxy.server);
    const manifest = await manifestOf([
      '{ id: page-text, type: img2txt, image: page.png }',
      '{ id: spoken, type: txt2audio, text: { from: page-text } }',
    ]);
    const { ledgerPath, outDir } = paths();
    const estimated = await estimateInProcess({ ...serviceOf(sim), manifest, ledgerPath });
    const boundMicro = estimated.jobs.find((job) => job.id === 'spoken')?.priceMicro ?? 0;
    const events = await runInProcess({ manifest, ledgerPath, outDir, baseUrl: proxy.url, token: sim.token });

    const text = await readFile(path.join(outDir, 'page-text.txt'), 'utf8');
    const spoken = proxy.uploads.filter((upload) => upload.path.endsWith('/txt2audio'));
    expect(spoken.map((upload) => (JSON.parse(upload.body.toString()) as { text?: string }).text)).toEqual([text]);
    // The same text written out costs what the dependent was charged.
    const alone = path.join(workspace.dir, 'alone.yaml');
    const job = '  - { id: same, type: txt2audio, text_file: out/page-text.txt }';
    await writeFile(alone, `${['version: 1', ...DEFAULTS, 'jobs:', job].join('\n')}\n`);
    const aloneDb = path.join(workspace.dir, 'alone.db');
    const same = await estimateInProcess({ ...serviceOf(sim), manifest: alone, ledgerPath: aloneDb });
    const realMicro = same.jobs[0]?.priceMicro ?? 0;
    expect(realMicro).toBeLessThan(boundMicro);
    const repriced = events.filter((event) => event.kind === 'repriced');
    expect(repriced).toEqual([{ kind: 'repriced', id: 'spoken', boundMicro, priceMicro: realMicro }]);
    // What the run says it spent on it (the library's and the log's `submitted`) is the real price too.
    expect(events.find((event) => event.kind === 'submitted' && event.id === 'spoken')).toMatchObject({ priceMicro: realMicro });
    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
    try {
      const [reader, speech] = [await ledger.getJob('page-text'), await ledger.getJob('spoken')];
      expect(speech).toMatchObject({ state: 'done', priceMicro: realMicro, spentMicro: realMicro });
      expect(await ledger.spentMicro()).toBe((reader?.priceMicro ?? 0) + realMicro);
    } finally {
      await ledger.close();
    }
  });

  const CHAIN = [
    '{ id: poster, type: txt2img, prompt: "a lighthouse at dusk" }',
    '{ id: upscaled, type: img-upscale, image: { from: poster } }',
    '{ id: moving, type: img2video, prompt: "waves break", first_frame_image: { from: upscaled } }',
  ];
  /** Half the jobs fail at the service, retryable and refunded: the first one taken fails, the next three do not. */
  const failingFirst = () => ({
    jobErrorRate: 0.5,
    seed: seedFailingFirst(0.5, 3),
    processingMs: { ...QUICK, 'img-upscale': 20 },
  });

  it('a failed input blocks its dependents and theirs, saying why; the next run unblocks and sends them, nothing twice', async () => {
    const sim = await workspace.startSim(failingFirst());
    const manifest = await manifestOf(CHAIN);
    const { ledgerPath, outDir } = paths();
    const first = await runInProcess({ ...serviceOf(sim), manifest, ledgerPath, outDir, retryFailed: 0 });

    const why = (event: RunEvent) => (event.kind === 'blocked' ? [[event.id, event.reason.split(':')[0]]] : []);
    const blocked = first.flatMap(why);
    expect(blocked).toEqual([['upscaled', 'input "poster" failed'], ['moving', 'input "upscaled" is blocked']]);
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img']);

    const second = await runInProcess({ ...serviceOf(sim), manifest, ledgerPath, outDir });
    const unblocked = second.flatMap((event) => (event.kind === 'unblocked' ? [event.id] : []));
    expect(unblocked).toEqual(['upscaled', 'moving']);
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-upscale', 'img2video']);
    expect(sim.stats.duplicates()).toEqual([]);
    const ledger = await openSqliteLedger(ledgerPath, { mode: 'read-only' });
    try {
      expect(await ledger.countsByState()).toMatchObject({ done: 3, blocked: 0 });
    } finally {
      await ledger.close();
    }
  });

  it('--retries sends the failed input again within the run, and its dependents as soon as it is done', async () => {
    const sim = await workspace.startSim(failingFirst());
    const manifest = await manifestOf(CHAIN);
    const { ledgerPath, outDir } = paths();
    const events = await runInProcess({ ...serviceOf(sim), manifest, ledgerPath, outDir, retryFailed: 1 });

    expect(events.some((event) => event.kind === 'blocked')).toBe(false);
    const pass = events.findIndex((event) => event.kind === 'retry_pass');
    expect(pass).toBeGreaterThan(indexOf(events, 'failed', 'poster'));
    expect(indexOf(events, 'submitting', 'upscaled')).toBeGreaterThan(pass);
    expect(indexOf(events, 'done', 'moving')).toBeGreaterThan(indexOf(events, 'done', 'upscaled'));
    // The upscale was priced at the largest image until its input existed.
    expect(events.find((event) => event.kind === 'repriced')).toMatchObject({ id: 'upscaled' });
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img', 'txt2img', 'img-upscale', 'img2video']);
  });

  it('refuses a graph that cannot run before any price call: every reference located at its field', async () => {
    const sim = await workspace.startSim();
    const manifest = await manifestOf([
      '{ id: a, type: img-upscale, image: { from: b } }',
      '{ id: b, type: img-upscale, image: { from: a } }',
      '{ id: c, type: img2video, prompt: "p", first_frame_image: { from: nobody } }',
    ]);
    const { ledgerPath, outDir } = paths();
    const run = runInProcess({ ...serviceOf(sim), manifest, ledgerPath, outDir });
    const refused = await run.catch((error: unknown) => error);
    expect(String(refused).replaceAll(workspace.dir, '')).toMatchInlineSnapshot(`
      "ManifestError: /pipe.yaml:11:40 job "b" (#2) image: expected references that do not lead back to this job, got a cycle: b → a → b; one of these jobs must take this field from a file or a text of its own
      /pipe.yaml:12:63 job "c" (#3) first_frame_image: expected the id of a job of this manifest, got "nobody" (no job has this id); give the id of the job whose result it takes
      2 problems in /pipe.yaml; nothing was sent."
    `);
    expect(sim.stats.calls).toMatchObject({ price: 0, submit: 0 });
  });

  it('an input whose file changed since it was downloaded is not sent: the job is left out, saying why', async () => {
    const sim = await workspace.startSim({ processingMs: { txt2img: 20, img2video: 20 } });
    const manifest = await manifestOf([
      '{ id: poster, type: txt2img, prompt: "a lighthouse at dusk" }',
      '{ id: poster-moving, type: img2video, prompt: "waves break", first_frame_image: { from: poster } }',
    ]);
    const { ledgerPath, outDir } = paths();
    await runInProcess({ ...serviceOf(sim), manifest, ledgerPath, outDir, select: { only: ['poster'] } });
    await writeFile(path.join(outDir, 'poster.png'), pngImage(80));
    const events = await runInProcess({ manifest, ledgerPath, outDir, baseUrl: sim.url, token: sim.token });

    const changed = `${path.join(outDir, 'poster.png')} changed since it was downloaded`;
    const reason = `input "first_frame_image" from "poster": ${changed}`;
    const skipped = events.filter((event) => event.kind === 'skipped');
    expect(skipped).toEqual([{ kind: 'skipped', id: 'poster-moving', reason }]);
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['txt2img']);
  });

  it('with webhooks, the delivery that settles the image sends the video, no status call made', async () => {
    const sim = await workspace.startSim({ pendingMs: QUICK, processingMs: QUICK });
    const manifest = await manifestOf([
      '{ id: poster, type: txt2img, prompt: "a lighthouse at dusk" }',
      '{ id: poster-moving, type: img2video, prompt: "waves break", first_frame_image: { from: poster } }',
    ]);
    const hooked = await startWebhookRun({ sim, manifest });
    try {
      const { summary } = await hooked.done;
      expect(summary.counts).toMatchObject({ done: 2 });
      const { events } = hooked;
      expect(indexOf(events, 'submitting', 'poster-moving')).toBeGreaterThan(indexOf(events, 'done', 'poster'));
      expect(sim.stats.calls.status).toBe(0);
    } finally {
      await hooked.ledger.close();
    }
  });
});

/** A seed whose first accepted job fails and whose next `then` succeed, at `rate` (the simulator's draw). */
export function seedFailingFirst(rate: number, then: number): number {
  for (let seed = 1; ; seed += 1) {
    const random = mulberry32(seed ^ 0x5bd1e995);
    const fails = Array.from({ length: then + 1 }, () => {
      const fail = random() < rate;
      random();
      return fail;
    });
    if (fails[0] === true && fails.slice(1).every((fail) => !fail)) return seed;
  }
}

