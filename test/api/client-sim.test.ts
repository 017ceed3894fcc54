/** The real client against the project's simulator: the happy path end to end, plus expiry. */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import { AuthError, ResultUrlExpiredError } from '../../src/api/errors.js';
import type { RequestStatus, ServiceClient } from '../../src/api/types.js';
import { startSimulator, type SimOptions, type Simulator } from '../../src/sim/index.js';
import { rejectionOf, TTS_JOB, TTS_REQUEST, useCleanup } from './setup.js';

const track = useCleanup();
let dir = '';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediabatch-sim-'));
  track(() => rm(dir, { recursive: true, force: true }));
});

async function start(options: SimOptions = {}): Promise<{ sim: Simulator; client: ServiceClient }> {
  const sim = await startSimulator({ port: 0, pendingMs: { txt2audio: 10, img2video: 10 }, processingMs: { txt2audio: 20, img2video: 20 }, ...options });
  track(() => sim.close());
  const client = createServiceClient({ baseUrl: sim.url, token: sim.token });
  track(() => client.close());
  return { sim, client };
}

async function waitDone(client: ServiceClient, requestId: string): Promise<RequestStatus> {
  for (let polls = 0; polls < 200; polls++) {
    const { value } = await client.requestStatus(requestId);
    if (value.status === 'done' || value.status === 'error') return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job ${requestId} did not finish`);
}

/** A real 64×64 grey PNG, the smallest size the service takes. */
function png64(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(64, 0);
  header.writeUInt32BE(64, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const rows = Buffer.alloc(64 * 65, 0x80);
  for (let row = 0; row < 64; row++) rows[row * 65] = 0; // filter byte of each row
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

describe('client against the simulator', () => {
  it('lists every model across pages, prices, submits, follows and downloads', async () => {
    const { sim, client } = await start({ extraModels: 400 });
    const models = await client.listModels({ types: ['txt2audio', 'img2video'] });
    // More than one page of 50: the walk must not stop at the first page.
    expect(models.length).toBeGreaterThan(50);
    expect(sim.stats.calls.models).toBe(Math.ceil(models.length / 50));
    expect(new Set(models.map((model) => model.slug)).size).toBe(models.length);
    const kokoro = models.find((model) => model.slug === 'Kokoro');
    expect(kokoro?.inferenceTypes).toContain('txt2audio');
    expect(kokoro?.languages.find((language) => language.slug === 'en-us')?.voices.map((voice) => voice.slug)).toContain('af_sky');
    expect(models.find((model) => model.slug === 'Ltxv_13B_0_9_8_Distilled_FP8')?.limits['max_frames']).toBe(120);

    expect((await client.balance()).balanceUsd).toBeGreaterThan(0);
    const { text: _text, ...params } = TTS_JOB;
    expect((await client.price({ endpoint: 'txt2audio/price-calculation', json: { ...params, count_text: TTS_JOB.text.length } })).value.priceUsd).toBeGreaterThan(0);

    const submitted = await client.submit(TTS_REQUEST);
    const status = await waitDone(client, submitted.value.requestId);
    expect(status.status).toBe('done');
    const dest = join(dir, 'intro.wav.part');
    const result = await client.download(status.resultUrl ?? '', dest, { maxBytes: 10_000_000 });
    const bytes = await readFile(dest);
    expect(result.bytes).toBe(bytes.length);
    expect(result.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(sim.stats.accepted).toHaveLength(1);
    expect(sim.stats.duplicates()).toEqual([]);
  });

  it('prices and submits an img2video job as multipart with its image', async () => {
    const { sim, client } = await start();
    const image = join(dir, 'beach.png');
    await writeFile(image, png64());
    const video = { model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, steps: 1, frames: 120, fps: 30 };
    expect((await client.price({ endpoint: 'img2video/price-calculation', json: video })).value.priceUsd).toBeGreaterThan(0);
    const fields = { ...video, prompt: 'slow waves roll onto the beach', negative_prompt: 'blurry', guidance: 0, seed: 42 };
    const submitted = await client.submit({
      endpoint: 'img2video',
      multipart: {
        fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])),
        files: [{ field: 'first_frame_image', path: image, contentType: 'image/png', filename: 'beach.png' }],
      },
    });
    expect((await waitDone(client, submitted.value.requestId)).status).toBe('done');
    expect(sim.stats.accepted.map((job) => job.type)).toEqual(['img2video']);
  });

  it('an expired result URL is a ResultUrlExpiredError; a fresh status gives a working one', async () => {
    const { client } = await start({ resultUrlTtlMs: 100 });
    const { value } = await client.submit(TTS_REQUEST);
    const first = await waitDone(client, value.requestId);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const error = await rejectionOf(client.download(first.resultUrl ?? '', join(dir, 'a'), { maxBytes: 10_000_000 }));
    expect(error).toBeInstanceOf(ResultUrlExpiredError);
    const fresh = await client.requestStatus(value.requestId);
    const result = await client.download(fresh.value.resultUrl ?? '', join(dir, 'a'), { maxBytes: 10_000_000 });
    expect(result.bytes).toBeGreaterThan(0);
  });

  it('a wrong token is an AuthError', async () => {
    const { sim } = await start();
    const client = createServiceClient({ baseUrl: sim.url, token: 'wrong' });
    track(() => client.close());
    expect(await rejectionOf(client.balance())).toBeInstanceOf(AuthError);
  });
});
