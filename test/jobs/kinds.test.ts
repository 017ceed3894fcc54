import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { Model } from '../../src/api/types.js';
import { JOB_KINDS, JOB_TYPES, kindOf, type ResolvedJob } from '../../src/jobs/index.js';
import { media, model } from '../../src/jobs/fields.js';
import { defineKind } from '../../src/jobs/kind.js';
import { groupKeyOf } from '../../src/pricing/keys.js';

function job(type: ResolvedJob['type'], params: Record<string, unknown>, extra: Partial<ResolvedJob> = {}): ResolvedJob {
  return {
    id: 'j',
    idDerived: false,
    type,
    index: 0,
    contentHash: 'h',
    params,
    media: {},
    position: { line: 1, col: 1 },
    fieldPositions: {},
    ...extra,
  };
}

const SPEECH = { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 };
const FRAME = { path: '/data/beach.png', written: 'beach.png', contentType: 'image/png' as const, bytes: 10, sha256: 'ab' };
const VIDEO = { model: 'Ltxv', prompt: 'waves', width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 };

describe('the kind registry', () => {
  it('has one kind per type, each knowing its own type', () => {
    expect(JOB_KINDS.map((kind) => kind.type)).toEqual([...JOB_TYPES]);
    for (const type of JOB_TYPES) expect(kindOf(type).type).toBe(type);
  });

  it('every required field is a field of the kind', () => {
    for (const kind of JOB_KINDS) {
      for (const field of kind.required) expect(field in kind.params || field in kind.content, `${kind.type}.${field}`).toBe(true);
      for (const field of Object.keys(kind.files)) expect(field in kind.content, `${kind.type}.${field}`).toBe(true);
    }
  });
});

describe('requests carry exactly the documented fields', () => {
  // A stray property riding along on a job must not reach the service: it could be refused, or
  // change what is generated and charged.
  const stray = { id: 'job-1', priceUsd: 3, text_file: 'x.txt' };

  it('speech: the text and its six fields; the price carries the length, never the text', () => {
    const speech = job('txt2audio', { ...SPEECH, ...stray }, { text: 'Hello.', textChars: 6 });
    expect(kindOf('txt2audio').submit(speech)).toEqual({ endpoint: 'txt2audio', json: { text: 'Hello.', ...SPEECH } });
    const pricing = kindOf('txt2audio').pricing;
    expect(pricing.by).toBe('per-length');
    if (pricing.by !== 'per-length') return;
    expect(pricing.request(speech, 20)).toEqual({ endpoint: 'txt2audio/price-calculation', json: { ...SPEECH, count_text: 20 } });
  });

  it('image to video: multipart fields as text, the frames as file parts; priced by six fields', () => {
    const video = job('img2video', { ...VIDEO, negative_prompt: 'blurry', ...stray }, { media: { first_frame_image: FRAME } });
    expect(kindOf('img2video').submit(video)).toEqual({
      endpoint: 'img2video',
      multipart: {
        fields: { prompt: 'waves', negative_prompt: 'blurry', model: 'Ltxv', width: '768', height: '432', guidance: '0', steps: '1', frames: '120', fps: '30', seed: '42' },
        files: [{ field: 'first_frame_image', path: '/data/beach.png', contentType: 'image/png', filename: 'beach.png' }],
      },
    });
    const pricing = kindOf('img2video').pricing;
    if (pricing.by !== 'per-key') throw new Error('img2video is priced per key');
    expect(pricing.request(video)).toEqual({
      endpoint: 'img2video/price-calculation',
      json: { model: 'Ltxv', width: 768, height: 432, steps: 1, frames: 120, fps: 30 },
    });
  });
});

describe('media uploads', () => {
  const CLIP = { path: '/data/clip.webm', written: 'clip.webm', contentType: 'video/webm', bytes: 99, sha256: 'cd' };

  it('video upscaling: the video as a video part; priced as a form by the size and length the file stated', () => {
    const params = { model: 'RealESRGAN_Vid_x4', scale: 2, width: 640, height: 360, duration: 5 };
    const upscale = job('vid-upscale', params, { media: { video: { ...CLIP, width: 640, height: 360, durationSec: 5 } } });
    expect(kindOf('vid-upscale').submit(upscale)).toEqual({
      endpoint: 'vid-upscale',
      multipart: {
        fields: { model: 'RealESRGAN_Vid_x4', scale: '2' },
        files: [{ field: 'video', path: '/data/clip.webm', contentType: 'video/webm', filename: 'clip.webm' }],
      },
    });
    const pricing = kindOf('vid-upscale').pricing;
    if (pricing.by !== 'per-key') throw new Error('vid-upscale is priced per key');
    const fields = { model: 'RealESRGAN_Vid_x4', scale: '2', width: '640', height: '360', duration: '5' };
    expect(pricing.request(upscale)).toEqual({ endpoint: 'vid-upscale/price-calculation', multipart: { fields, files: [] } });
  });

  it('a list field sends each of its files, in order, as a repeated `<field>[]` part', () => {
    const edit = defineKind({
      type: 'list-of-images',
      title: 'A kind with a list of images',
      params: { model: model('Any') },
      content: { images: media('Images', { image: 10 }, { list: true }) },
      pricing: { by: 'per-key', keyFields: ['model'] },
      media: 'image',
      plans: { basic: { perMinute: 1 }, premium: { perMinute: 1 } },
    });
    expect(edit.content['images']?.schema.safeParse(['a.png', 'b.png']).success).toBe(true);
    const second = { ...FRAME, path: '/data/dusk.png', written: 'dusk.png' };
    const request = edit.submit({ id: 'j', type: edit.type as never, params: { model: 'Any' }, media: { 'images.0': FRAME, 'images.1': second } });
    expect('multipart' in request && request.multipart.files.map((file) => [file.field, file.filename])).toEqual([
      ['images[]', 'beach.png'],
      ['images[]', 'dusk.png'],
    ]);
  });
});

describe('text to image', () => {
  const IMAGE = { model: 'Flux1schnell', prompt: 'a red kite', width: 512, height: 512, guidance: 3.5, steps: 4, seed: 7 };
  const flux: Model = {
    slug: 'Flux1schnell',
    name: 'FLUX.1 schnell',
    inferenceTypes: ['txt2img'],
    limits: { min_width: 256, max_width: 2048, min_height: 256, max_height: 2048, resolution_step: 16, min_steps: 1, max_steps: 8 },
    features: { supports_guidance: false },
    defaults: {},
    languages: [],
    loras: [],
    status: undefined,
  };
  const problems = (params: Record<string, unknown>, models: Model[] = [flux]) => {
    const found: string[] = [];
    kindOf('txt2img').checkModel(job('txt2img', params), models[0]!, models, (field, expected, got, hint) =>
      found.push(`${field}: ${expected}, got ${JSON.stringify(got)}${hint === undefined ? '' : `; ${hint}`}`),
    );
    return found;
  };

  it('sends its JSON fields, LoRAs included, and nothing else', () => {
    const image = job('txt2img', { ...IMAGE, negative_prompt: 'blur', loras: [{ name: 'ink', weight: 0.8 }], id: 'x', priceUsd: 1 });
    expect(kindOf('txt2img').submit(image)).toEqual({
      endpoint: 'txt2img',
      json: { ...IMAGE, negative_prompt: 'blur', loras: [{ name: 'ink', weight: 0.8 }] },
    });
  });

  it('is priced per size, steps, guidance and LoRAs: jobs that differ only in prompt or seed share a call', () => {
    const a = job('txt2img', IMAGE);
    const b = job('txt2img', { ...IMAGE, prompt: 'a blue kite', seed: 8 });
    const c = job('txt2img', { ...IMAGE, width: 1024 });
    expect(groupKeyOf(a)).toBe(groupKeyOf(b));
    expect(groupKeyOf(a)).not.toBe(groupKeyOf(c));
    const pricing = kindOf('txt2img').pricing;
    if (pricing.by !== 'per-key') throw new Error('txt2img is priced per key');
    // The price endpoint requires all seven fields.
    expect(pricing.request(a)).toEqual({ endpoint: 'txt2img/price-calculation', json: IMAGE });
  });

  it('checks bounds, the resolution step, guidance a model does not use, and LoRAs it does not offer', () => {
    expect(problems(IMAGE)).toEqual(['guidance: 0 for Flux1schnell (it does not use guidance), got {"value":3.5}']);
    expect(problems({ ...IMAGE, guidance: 0, width: 500, steps: 9 })).toEqual([
      'steps: a whole number between 1 and 8 for Flux1schnell, got {"value":9}',
      'width: a multiple of 16 for Flux1schnell, got {"value":500}; try 496',
    ]);
    const klein: Model = { ...flux, slug: 'Klein', features: {}, loras: ['ink', 'watercolor'] };
    expect(problems({ ...IMAGE, guidance: 0, loras: [{ name: 'ink', weight: 1 }] }, [flux, klein])).toEqual([
      'loras: no LoRAs for Flux1schnell (it offers none), got {"value":["ink"]}; remove them, or use a model that offers LoRAs: Klein',
    ]);
    expect(problems({ ...IMAGE, loras: [{ name: 'oil', weight: 1 }] }, [klein])).toEqual([
      'loras: a LoRA of Klein, got {"value":"oil"}; LoRAs of Klein: ink, watercolor',
    ]);
  });

  it('names its result by the bytes: PNG, JPEG or WebP, whatever the URL says', () => {
    const output = kindOf('txt2img').output;
    expect(output.media).toBe('image');
    expect(output.extension({ params: {} }, { mime: 'image/jpeg', urlExtension: 'png' })).toBe('jpg');
    expect(output.extension({ params: {} }, { mime: 'image/webp' })).toBe('webp');
    expect(output.extension({ params: {} }, { urlExtension: 'bin' })).toBe('png');
  });
});

describe('result file names', () => {
  it('take the extension from the bytes, else the URL, else the kind’s default, only among what the kind makes', () => {
    const speech = kindOf('txt2audio').output;
    expect(speech.extension({ params: { format: 'mp3' } }, { mime: 'audio/wav', urlExtension: 'mp3' })).toBe('wav');
    expect(speech.extension({ params: { format: 'mp3' } }, { urlExtension: 'flac' })).toBe('flac');
    expect(speech.extension({ params: { format: 'mp3' } }, { mime: 'video/mp4', urlExtension: 'mp4' })).toBe('mp3');
    const video = kindOf('img2video').output;
    expect(video.extension({ params: {} }, { mime: 'video/mp4' })).toBe('mp4');
    expect(video.extension({ params: {} }, { urlExtension: 'wav' })).toBe('mp4');
  });
});

describe('text to video', () => {
  const CLIP = { model: 'Ltxv', prompt: 'dawn', negative_prompt: 'blur', width: 768, height: 432, steps: 1, frames: 60, fps: 30, guidance: 0, seed: 42 };

  it('sends its JSON fields and nothing else; is priced by the six fields the price endpoint takes', () => {
    const clip = job('txt2video', { ...CLIP, id: 'x', text_file: 'y' });
    expect(kindOf('txt2video').submit(clip)).toEqual({ endpoint: 'txt2video', json: CLIP });
    const pricing = kindOf('txt2video').pricing;
    if (pricing.by !== 'per-key') throw new Error('txt2video is priced per key');
    expect(pricing.request(clip)).toEqual({
      endpoint: 'txt2video/price-calculation',
      json: { model: 'Ltxv', width: 768, height: 432, frames: 60, steps: 1, fps: 30 },
    });
    expect(groupKeyOf(clip)).toBe(groupKeyOf(job('txt2video', { ...CLIP, prompt: 'dusk', seed: 1 })));
  });

  it('makes a video', () => {
    expect(kindOf('txt2video').output.media).toBe('video');
    expect(kindOf('txt2video').output.extension({ params: {} }, { mime: 'video/mp4', urlExtension: 'bin' })).toBe('mp4');
  });
});

describe('text to embedding', () => {
  const EMBED = { model: 'Bge_M3_FP16', input: 'the quick brown fox' };

  it('sends its JSON fields; is priced by its input and model, so equal texts share one call', () => {
    const fox = job('txt2embedding', { ...EMBED, return_result_in_response: true });
    expect(kindOf('txt2embedding').submit(fox)).toEqual({ endpoint: 'txt2embedding', json: { model: 'Bge_M3_FP16', return_result_in_response: true, input: 'the quick brown fox' } });
    const pricing = kindOf('txt2embedding').pricing;
    if (pricing.by !== 'per-key') throw new Error('txt2embedding is priced per key');
    expect(pricing.request(fox)).toEqual({ endpoint: 'txt2embedding/price-calculation', json: EMBED });
    expect(groupKeyOf(fox)).toBe(groupKeyOf(job('txt2embedding', EMBED)));
    expect(groupKeyOf(fox)).not.toBe(groupKeyOf(job('txt2embedding', { ...EMBED, input: 'a lazy dog' })));
  });

  it('makes an embedding, written as JSON, polled as the service’s clients poll embeddings', () => {
    expect(kindOf('txt2embedding').output.media).toBe('embedding');
    expect(kindOf('txt2embedding').output.extension({ params: {} }, { urlExtension: 'bin' })).toBe('json');
    expect(kindOf('txt2embedding').poll.service).toEqual({ firstMs: 500, maxMs: 3000, factor: 1.5, giveUpMs: 120_000 });
  });
});

describe('a multipart kind', () => {
  it('sends a flag as 1 or 0, which Laravel takes (it refuses the string "true")', () => {
    const flag = { schema: z.boolean(), expected: 'true or false', optional: true } as const;
    const ocr = defineKind({
      type: 'ocr',
      title: 'OCR',
      params: { model: { schema: z.string(), expected: 'a model slug' }, return_result_in_response: flag },
      content: { image: media('The page', { image: 10 }) },
      pricing: { by: 'per-key', keyFields: ['model'] },
      media: 'text',
      plans: { basic: { perMinute: 1 }, premium: { perMinute: 1 } },
    });
    const page = { ...job('txt2img', { model: 'm', return_result_in_response: true }), media: { image: FRAME } };
    expect(ocr.submit(page)).toMatchObject({ multipart: { fields: { model: 'm', return_result_in_response: '1' } } });
    expect(ocr.poll.service).toEqual({ firstMs: 3000, maxMs: 15_000, factor: 1.5, giveUpMs: 15 * 60_000 });
  });
});
