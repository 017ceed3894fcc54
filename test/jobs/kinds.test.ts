import { describe, expect, it } from 'vitest';
import { JOB_KINDS, JOB_TYPES, kindOf, type ResolvedJob } from '../../src/jobs/index.js';

function job(type: ResolvedJob['type'], params: Record<string, unknown>, extra: Partial<ResolvedJob> = {}): ResolvedJob {
  return {
    id: 'j',
    idDerived: false,
    type,
    index: 0,
    contentHash: 'h',
    params,
    images: {},
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
    const video = job('img2video', { ...VIDEO, negative_prompt: 'blurry', ...stray }, { images: { first_frame_image: FRAME } });
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
