/**
 * The OpenAPI harness itself (test/support/openapi.ts): requests built by hand that the document
 * accepts pass, and each kind of mistake it must catch is named.
 */
import { describe, expect, it } from 'vitest';
import { OpenApi, type SentRequest } from '../support/openapi.js';

const api = OpenApi.load();
const AUTH = { authorization: 'Bearer token', accept: 'application/json' };
const PNG = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' });

function json(path: string, body: unknown, headers: Record<string, string> = AUTH): SentRequest {
  const content = { ...headers, 'content-type': 'application/json' };
  return { method: 'POST', url: `/api/v1/client/${path}`, headers: content, body: Buffer.from(JSON.stringify(body)) };
}

/** A multipart body as undici encodes it: text fields, then files (name → a PNG). */
async function multipart(path: string, fields: Record<string, string>, files: readonly string[]): Promise<SentRequest> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const name of files) form.append(name, PNG, `${name}.png`);
  const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  const body = Buffer.from(await request.arrayBuffer());
  const headers = { ...AUTH, 'content-type': request.headers.get('content-type') ?? '' };
  return { method: 'POST', url: `/api/v1/client/${path}`, headers, body };
}

const VIDEO = { prompt: 'waves', model: 'Ltxv', width: '512', height: '512', guidance: '7.5', steps: '8', seed: '1' };
const FRAMES = { ...VIDEO, frames: '97', fps: '24' };
const IMAGE = { prompt: 'a cat', model: 'Flux1schnell', width: 512, height: 512, guidance: 0, steps: 4, seed: 1 };
const SPEECH = { text: 'hi', model: 'Kokoro', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };

const problemsOf = async (request: SentRequest | Promise<SentRequest>) => (await api.check(await request)).problems;

function get(path: string, headers: Record<string, string> = AUTH): SentRequest {
  return { method: 'GET', url: `/api/v1/client/${path}`, headers, body: Buffer.alloc(0) };
}

describe('the OpenAPI harness', () => {
  it('passes requests the document accepts, JSON and multipart, and names their operation', async () => {
    const loras = [{ name: 'style', weight: 0.5 }];
    const image = await api.check(json('txt2img', { ...IMAGE, loras }));
    expect(image).toEqual({ operation: 'POST /api/v1/client/txt2img', problems: [] });
    expect(await problemsOf(multipart('img2video', FRAMES, ['first_frame_image', 'last_frame_image']))).toEqual([]);
    const edit = { prompt: 'x', model: 'm', steps: '4', seed: '1' };
    expect(await problemsOf(multipart('img2img', edit, ['images[]', 'images[]']))).toEqual([]);
    const models = get('models?limit=50&page=1&filter%5Binference_types%5D=txt2img%2Ctxt2audio');
    expect(await api.check(models)).toEqual({ operation: 'GET /api/v1/client/models', problems: [] });
  });

  it('refuses a misspelt multipart field name, and says which required field is then missing', async () => {
    expect(await problemsOf(multipart('img2video', FRAMES, ['first_frame_img']))).toEqual([
      'field first_frame_img is not a property of the schema',
      'required field first_frame_image is missing',
    ]);
  });

  it('refuses a file sent as text, text sent as a file, and text values the schema refuses', async () => {
    const fields = { ...VIDEO, first_frame_image: 'a.png', frames: '97', fps: 'fast', steps: '8.5' };
    expect((await problemsOf(multipart('img2video', fields, ['prompt']))).sort()).toEqual([
      'field first_frame_image is a file (format: binary) but was sent as text',
      'field fps: "fast" is not an integer',
      'field prompt is sent 2 times',
      'field prompt is text but was sent as a file',
      'field steps: "8.5" is not an integer',
    ]);
    const speech = { ...SPEECH, speed: '1', sample_rate: '24000', mode: 'shout' };
    expect(await problemsOf(multipart('txt2audio', speech, []))).toEqual([
      'field mode: must be one of "custom_voice", "voice_clone", "voice_design"',
    ]);
  });

  it('refuses JSON with a stray, missing or mistyped field', async () => {
    const { seed: _, ...noSeed } = IMAGE;
    expect(await problemsOf(json('txt2img', { ...noSeed, steps: 'four', size: 3 }))).toEqual([
      "body: must have required property 'seed'",
      'body: size is not a property of the schema',
      'body steps: must be integer',
    ]);
  });

  it('reads nullable, and oneOf in JSON and in multipart', async () => {
    expect(await problemsOf(json('txt2img', { ...IMAGE, negative_prompt: null }))).toEqual([]);
    expect(await problemsOf(json('txt2img', { ...IMAGE, prompt: null }))).toEqual(['body prompt: must be string']);
    const embedding = (input: unknown) => json('txt2embedding', { input, model: 'Bge_M3_FP16' });
    expect(await problemsOf(embedding(['one', 'two']))).toEqual([]);
    expect(await problemsOf(embedding(3))).toContain('body input: must match exactly one schema in oneOf');
    const edit = { prompt: 'x', model: 'm', steps: '4', seed: '1' };
    expect(await problemsOf(multipart('img2img', edit, ['image', 'images[]']))).toEqual([
      'no branch of the oneOf fits; nearest (0): field images[] is not a property of the schema',
    ]);
  });

  it('takes a multipart boolean as 1 or 0 only', async () => {
    const model = 'WhisperLargeV3';
    const transcript = (include_ts: string) => multipart('audiofile2txt', { include_ts, model }, ['audio']);
    expect(await problemsOf(transcript('1'))).toEqual([]);
    expect(await problemsOf(transcript('true'))).toEqual(['field include_ts: "true" is not a boolean sent as 1 or 0']);
  });

  it('refuses an unknown path, a content type it does not take, a bad query and a missing token', async () => {
    expect(await api.check(json('txt2imgs', IMAGE))).toEqual({
      operation: undefined,
      problems: ['no operation POST /api/v1/client/txt2imgs in the document'],
    });
    expect(await problemsOf(json('txt2audio', SPEECH))).toEqual([
      'content type application/json is not one it takes (multipart/form-data)',
    ]);
    const models = get('models?limit=500&filter%5Binference_types%5D=txt2image&sort=x', { accept: 'text/html' });
    expect(await problemsOf(models)).toEqual([
      'header parameter Accept: must be one of "application/json"',
      'query parameter limit: must be <= 50',
      expect.stringMatching(/^query parameter filter\[inference_types\] 0: must be one of "txt2img", /),
      'query parameter sort is not in the document',
      'no bearer token in Authorization',
    ]);
  });
});
