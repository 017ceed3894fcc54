import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { Check, type UploadRule } from '../../src/sim/rules.js';
import { pngImage } from '../../src/sim/results.js';
import { mp3Frames, mp4Movie, webmMovie, wavTone } from '../support/media-files.js';
import { call, FAST, startSimulator } from './helpers.js';

const form = (fields: Record<string, string>, files: Record<string, Buffer | Buffer[]> = {}): FormData => {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  for (const [name, bytes] of Object.entries(files)) {
    for (const one of [bytes].flat()) body.append(name, new Blob([one]), `${name}.bin`);
  }
  return body;
};

describe('simulator: uploads of every medium checked as the service checks them', () => {
  let sim: Simulator;
  afterEach(async () => {
    await sim?.close();
  });

  it('refuses an image given as the video with a 422 in the service shape, and prices a video by its size and length', async () => {
    sim = await startSimulator(FAST);
    const wrong = await call(sim, '/api/v1/client/vid-upscale', { form: form({ model: 'RealESRGAN_Vid_x4' }, { video: pngImage() }) });
    expect(wrong.status).toBe(422);
    const message = 'The video field must be a file of type: mp4, mpeg, mov, avi, wmv, ogg.';
    expect(wrong.body).toEqual({ message, errors: { video: [message] } });

    const fields = { model: 'RealESRGAN_Vid_x4', width: '640', height: '360', duration: '5' };
    const price = await call(sim, '/api/v1/client/vid-upscale/price-calculation', { form: form(fields) });
    expect(price.status).toBe(200);
    const byFile = await call(sim, '/api/v1/client/vid-upscale/price-calculation', { form: form({ model: 'RealESRGAN_Vid_x4' }, { video: webmMovie(5) }) });
    expect(byFile.body).toEqual(price.body);
    const byMp4 = await call(sim, '/api/v1/client/vid-upscale/price-calculation', { form: form({ model: 'RealESRGAN_Vid_x4' }, { video: mp4Movie(5) }) });
    expect(byMp4.body).toEqual(price.body);
    const submit = await call(sim, '/api/v1/client/vid-upscale', { form: form({ model: 'RealESRGAN_Vid_x4' }, { video: webmMovie(5) }) });
    expect(submit.status).toBe(200);
    expect(sim.stats.accepted).toHaveLength(1);
  });

  it('prices a replacement at its own path by the video or its length and size, and wants both sides or neither', async () => {
    sim = await startSimulator(FAST);
    const model = 'Wan2_2_Animate_14B_INT8';
    const at = '/api/v1/client/videos/replace/price';
    const byFacts = await call(sim, at, { form: form({ model, duration: '5', width: '640', height: '360' }) });
    expect(byFacts.status).toBe(200);
    expect((await call(sim, at, { form: form({ model }, { video: mp4Movie(5) }) })).body).toEqual(byFacts.body);
    const half = await call(sim, '/api/v1/client/videos/replace', { form: form({ model, width: '640' }, { video: mp4Movie(5), ref_image: pngImage() }) });
    const message = 'The height field is required when width is present.';
    expect(half.body).toEqual({ message, errors: { height: [message] } });
  });

  it('holds each upload to its size in kilobytes and its media by the bytes', async () => {
    const rule: UploadRule = { kinds: ['audio'], types: 'mp3, wav', maxKb: 1 };
    const check = async (bytes: Buffer) => {
      const c = new Check({ model: 'none', audio: new Blob([bytes]) }, new Map(), ['any']);
      await c.upload('audio', true, rule);
      return c.errors['audio'];
    };
    expect(await check(wavTone(8000, 0.01))).toBeUndefined();
    expect(await check(wavTone(8000, 1))).toEqual(['The audio field must not be greater than 1 kilobytes.']);
    expect(await check(pngImage(8))).toEqual(['The audio field must be a file of type: mp3, wav.']);
  });

  it('reads images[] parts as a list, each checked, as many as the model takes; not with image too', async () => {
    sim = await startSimulator(FAST);
    const fields = { model: 'QwenImageEdit_Plus_NF4', prompt: 'dusk', steps: '40', seed: '1', 'loras[0][name]': 'x', 'loras[0][weight]': '0.5' };
    const edit = (files: Record<string, Buffer | Buffer[]>) => call(sim, '/api/v1/client/img2img', { form: form(fields, files) });
    const lorasRefused = await edit({ 'images[]': [pngImage(), pngImage()] });
    expect(lorasRefused.body).toEqual({ message: 'The loras field is prohibited.', errors: { loras: ['The loras field is prohibited.'] } });
    delete (fields as Record<string, string>)['loras[0][name]'];
    delete (fields as Record<string, string>)['loras[0][weight]'];
    expect((await edit({ 'images[]': [pngImage(), pngImage()] })).status).toBe(200);
    expect((await edit({ 'images[]': [pngImage(), wavTone(8000, 0.01)] })).body).toMatchObject({
      errors: { 'images.1': ['The images.1 field must be a file of type: jpg, jpeg, png, gif, bmp, webp.'] },
    });
    expect((await edit({ 'images[]': Array(4).fill(pngImage()) })).body).toMatchObject({
      errors: { images: ['The images field must not have more than 3 items.'] },
    });
    expect((await edit({ image: pngImage(), 'images[]': [pngImage()] })).body).toMatchObject({
      errors: { image: ['The image field prohibits images from being present.'] },
    });
    expect(sim.stats.accepted).toHaveLength(1);
  });

  it('a voice to clone: required for voice_clone, 3 to 10 seconds; a preset voice needs none of it', async () => {
    sim = await startSimulator(FAST);
    const speech = { model: 'Qwen3_TTS_12Hz_1_7B_Base', text: 'Hi.', lang: 'English', speed: '1', format: 'wav', sample_rate: '24000' };
    const speak = (fields: Record<string, string>, files: Record<string, Buffer> = {}) =>
      call(sim, '/api/v1/client/txt2audio', { form: form({ ...speech, ...fields }, files) });
    expect((await speak({ mode: 'voice_clone' })).body).toMatchObject({ errors: { ref_audio: ['The ref audio field is required.'] } });
    expect((await speak({ mode: 'voice_clone' }, { ref_audio: mp3Frames(12) })).body).toMatchObject({
      errors: { ref_audio: ['The ref audio must be between 3 and 10 seconds long.'] },
    });
    expect((await speak({ mode: 'voice_clone', ref_text: 'Hello.' }, { ref_audio: mp3Frames(5) })).status).toBe(200);
    expect((await speak({ mode: 'voice_design', instruct: 'a warm voice' })).status).toBe(200);
    expect((await speak({})).body).toMatchObject({ errors: { voice: ['The voice field is required.'] } });
    expect(sim.stats.accepted).toHaveLength(2);
  });
});
