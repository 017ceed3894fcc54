import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResponseShapeError } from '../../src/api/errors.js';
import { rejectionOf, TOKEN, TTS_JOB, TTS_REQUEST, useCleanup, useScripted } from './setup.js';

const scripted = useScripted();
const track = useCleanup();

function modelsPage(page: number, lastPage: number, data: unknown[]) {
  return { body: { data, links: {}, meta: { current_page: page, last_page: lastPage, per_page: 50, total: 99 } } };
}

describe('service client requests', () => {
  it('sends the token and Accept on a JSON submit and returns the id and rate-limit headers', async () => {
    const { server, client } = await scripted([
      {
        body: { data: { request_id: 'abc-123' } },
        headers: { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-daily-remaining': '299' },
      },
    ]);
    const answer = await client.submit(TTS_REQUEST);
    expect(answer).toEqual({ value: { requestId: 'abc-123' }, rateLimit: { limit: 5, remaining: 4, dailyRemaining: 299 } });
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/api/v1/client/txt2audio');
    expect(request?.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(request?.headers['accept']).toBe('application/json');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body.toString() ?? '')).toEqual(TTS_JOB);
  });

  it('accepts a numeric request id and a price sent as a string', async () => {
    const { client } = await scripted([{ body: { data: { request_id: 42 } } }, { body: { data: { price: '0.0125' } } }]);
    expect((await client.submit(TTS_REQUEST)).value).toEqual({ requestId: '42' });
    const { text: _text, ...params } = TTS_JOB;
    expect((await client.price({ endpoint: 'txt2audio/price-calculation', json: { ...params, count_text: 20 } })).value).toEqual({ priceUsd: 0.0125 });
  });

  it('sends a request to its endpoint under the base path, with its JSON body as given', async () => {
    const { server, client } = await scripted([
      { body: { data: { request_id: 'a' } } },
      { body: { data: { price: 0.01 } } },
      { body: { data: { price: 0.5 } } },
    ]);
    const { text: _text, ...params } = TTS_JOB;
    await client.submit(TTS_REQUEST);
    await client.price({ endpoint: 'txt2audio/price-calculation', json: { ...params, count_text: 20 } });
    const video = { model: 'Ltxv', width: 768, height: 432, steps: 1, frames: 120, fps: 30 };
    await client.price({ endpoint: 'img2video/price-calculation', json: video });
    const bodies = server.requests.map((request) => JSON.parse(request.body.toString()) as unknown);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/api/v1/client/txt2audio',
      '/api/v1/client/txt2audio/price-calculation',
      '/api/v1/client/img2video/price-calculation',
    ]);
    expect(bodies).toEqual([TTS_JOB, { ...params, count_text: 20 }, video]);
  });

  it('keeps the base URL path prefix and reads the balance', async () => {
    const { server, client } = await scripted([{ body: { data: { balance: 12.5 } } }]);
    await client.close();
    const { createServiceClient } = await import('../../src/api/client.js');
    const prefixed = createServiceClient({ baseUrl: `${server.url}/proxy/`, token: TOKEN });
    track(() => prefixed.close());
    expect(await prefixed.balance()).toEqual({ balanceUsd: 12.5 });
    expect(server.requests[0]?.url).toBe('/proxy/api/v1/client/balance');
  });

  it('walks every models page with limit=50 and the type filter', async () => {
    const record = (slug: string) => ({ slug, name: slug.toUpperCase(), inference_types: ['txt2audio'], info: [] });
    const { server, client } = await scripted([
      modelsPage(1, 3, [record('a'), record('b')]),
      modelsPage(2, 3, [record('c')]),
      modelsPage(3, 3, [record('d')]),
    ]);
    const models = await client.listModels({ types: ['txt2audio', 'img2video'] });
    expect(models.map((model) => model.slug)).toEqual(['a', 'b', 'c', 'd']);
    expect(server.requests).toHaveLength(3);
    server.requests.forEach((request, index) => {
      const url = new URL(request.url, server.url);
      expect(url.pathname).toBe('/api/v1/client/models');
      expect(url.searchParams.get('limit')).toBe('50');
      expect(url.searchParams.get('page')).toBe(String(index + 1));
      expect(url.searchParams.get('filter[inference_types]')).toBe('txt2audio,img2video');
      expect(request.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    });
  });

  it('normalizes model records: info [], inference_types object, languages missing or present', async () => {
    const { client } = await scripted([
      modelsPage(1, 1, [
        { slug: 'Kokoro', name: 'Kokoro TTS', inference_types: { txt2audio: { enabled: true } }, info: [] },
        {
          slug: 'Ltxv',
          name: 'LTX',
          inference_types: ['img2video'],
          info: { limits: { min_frames: 30, max_frames: '120', note: 'x' }, features: { supports_last_frame: true } },
          languages: [{ slug: 'en-us', name: 'English', voices: [{ slug: 'af_sky', name: 'Sky', gender: 'female' }] }],
          extra_field: 'ignored',
        },
      ]),
    ]);
    const [kokoro, ltx] = await client.listModels({ types: ['txt2audio', 'img2video'] });
    expect(kokoro).toEqual({
      slug: 'Kokoro',
      name: 'Kokoro TTS',
      inferenceTypes: ['txt2audio'],
      limits: {},
      features: {},
      defaults: {},
      languages: [],
      loras: [],
      status: undefined,
    });
    expect(ltx?.limits).toEqual({ min_frames: 30, max_frames: 120 });
    expect(ltx?.features).toEqual({ supports_last_frame: true });
    expect(ltx?.languages).toEqual([
      { slug: 'en-us', name: 'English', voices: [{ slug: 'af_sky', name: 'Sky', gender: 'female' }] },
    ]);
  });

  it('gives up on a models endpoint that never reaches its last page', async () => {
    const { server, client } = await scripted((_request, index) => modelsPage(index + 1, 100_000, [{ slug: `m${index}` }]));
    const error = await rejectionOf(client.listModels({ types: ['txt2audio', 'img2video'] }));
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toContain('still paging after 200 pages');
    expect(server.requests).toHaveLength(200);
  });

  it('normalizes request status: string progress, unknown status kept raw, error fields', async () => {
    const { server, client } = await scripted([
      { body: { data: { status: 'processing', progress: '42.5' } } },
      { body: { data: { status: 'queued_on_gpu' } } },
      {
        body: {
          data: { status: 'error', progress: null, error_code: 'WORKER_TIMEOUT', error_message: 'took too long', retryable: true, refunded: 'true' },
        },
      },
      { body: { data: { status: 'done', progress: 100, result_url: 'https://files.example/r.mp3?sig=1' } } },
    ]);
    expect((await client.requestStatus('id/1')).value).toMatchObject({ status: 'processing', rawStatus: 'processing', progress: 42.5 });
    expect(server.requests[0]?.url).toBe('/api/v1/client/request-status/id%2F1');
    expect((await client.requestStatus('x')).value).toMatchObject({ status: 'unknown', rawStatus: 'queued_on_gpu', progress: undefined });
    expect((await client.requestStatus('x')).value).toMatchObject({
      status: 'error',
      errorCode: 'WORKER_TIMEOUT',
      errorMessage: 'took too long',
      retryable: true,
      refunded: true,
    });
    expect((await client.requestStatus('x')).value).toMatchObject({ status: 'done', resultUrl: 'https://files.example/r.mp3?sig=1' });
  });

  it('refuses a 2xx whose body breaks the schema, saying the request was sent', async () => {
    const { client } = await scripted([
      { body: { data: { request_id: '' } } },
      { body: '<html>hello</html>', headers: { 'content-type': 'text/html' } },
      { body: { data: { price: 'free' } } },
    ]);
    const empty = await rejectionOf(client.submit(TTS_REQUEST));
    expect(empty).toBeInstanceOf(ResponseShapeError);
    expect(empty).toMatchObject({ requestSent: true, status: 200, path: '/api/v1/client/txt2audio' });
    expect((empty as Error).message).toMatch(/^POST \/api\/v1\/client\/txt2audio: unexpected answer .*data\.request_id/);
    expect(await rejectionOf(client.submit(TTS_REQUEST))).toMatchObject({ name: 'ResponseShapeError', issues: 'body is not JSON' });
    const { text: _text, ...params } = TTS_JOB;
    expect(await rejectionOf(client.price({ endpoint: 'txt2audio/price-calculation', json: { ...params, count_text: 5 } }))).toBeInstanceOf(ResponseShapeError);
  });

  it('submits img2video as multipart with real file parts and numbers as strings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mediabatch-api-'));
    track(() => rm(dir, { recursive: true, force: true }));
    const first = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    const last = Buffer.from([0xff, 0xd8, 0xff, 9, 8, 7]);
    await writeFile(join(dir, 'a.png'), first);
    await writeFile(join(dir, 'b.jpg'), last);
    const { server, client } = await scripted([{ body: { data: { request_id: 'vid-1' } } }]);
    const fields = { model: 'Ltxv_13B_0_9_8_Distilled_FP8', prompt: 'slow waves', negative_prompt: 'blurry', width: '768', height: '432' };
    const answer = await client.submit({
      endpoint: 'img2video',
      multipart: {
        fields: { ...fields, steps: '1', frames: '120', fps: '30', guidance: '0', seed: '42' },
        files: [
          { field: 'first_frame_image', path: join(dir, 'a.png'), contentType: 'image/png', filename: 'a.png' },
          { field: 'last_frame_image', path: join(dir, 'b.jpg'), contentType: 'image/jpeg', filename: 'b.jpg' },
        ],
      },
    });
    expect(answer.value.requestId).toBe('vid-1');
    const request = server.requests[0];
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request?.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    const form = await new Request('http://x/', {
      method: 'POST',
      headers: { 'content-type': String(request?.headers['content-type']) },
      body: request?.body,
    }).formData();
    expect(Object.fromEntries(['prompt', 'negative_prompt', 'model', 'width', 'height', 'guidance', 'steps', 'frames', 'fps', 'seed'].map((key) => [key, form.get(key)]))).toEqual({
      prompt: 'slow waves',
      negative_prompt: 'blurry',
      model: 'Ltxv_13B_0_9_8_Distilled_FP8',
      width: '768',
      height: '432',
      guidance: '0',
      steps: '1',
      frames: '120',
      fps: '30',
      seed: '42',
    });
    const firstPart = form.get('first_frame_image') as File;
    const lastPart = form.get('last_frame_image') as File;
    expect(firstPart.name).toBe('a.png');
    expect(firstPart.type).toBe('image/png');
    expect(Buffer.from(await firstPart.arrayBuffer())).toEqual(first);
    expect(lastPart.name).toBe('b.jpg');
    expect(Buffer.from(await lastPart.arrayBuffer())).toEqual(last);
  });
});
