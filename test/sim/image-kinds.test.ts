/** The simulator's image kinds check their image as the service does and price it by its sides. */
import { afterEach, describe, expect, it } from 'vitest';
import { pngImage } from '../../src/sim/results.js';
import { call, startSimulator, type Simulator } from './helpers.js';

function form(fields: Record<string, string>, image?: Buffer): FormData {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) body.set(key, value);
  if (image !== undefined) body.set('image', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'photo.png');
  return body;
}

describe('simulator: background removal, upscaling, OCR', () => {
  let sim: Simulator | undefined;
  afterEach(async () => sim?.close());

  it('prices a file and its width and height alike; a side outside 64 to 5000 px is refused', async () => {
    sim = await startSimulator();
    const price = (kind: string, body: FormData) => call(sim!, `/api/v1/client/${kind}/price-calculation`, { form: body });
    const byFile = await price('img-rmbg', form({ model: 'Ben2' }, pngImage(80)));
    const bySides = await price('img-rmbg', form({ model: 'Ben2', width: '80', height: '80' }));
    expect(byFile.status).toBe(200);
    expect(bySides.body).toEqual(byFile.body);
    const larger = await price('img-upscale', form({ model: 'RealESRGAN_x4plus', width: '1920', height: '1080' }));
    const smaller = await price('img-upscale', form({ model: 'RealESRGAN_x4plus', width: '640', height: '480' }));
    expect(larger.body.data.price).toBeGreaterThan(smaller.body.data.price);

    const narrow = await price('img2txt', form({ model: 'Nanonets_Ocr_S_F16', width: '63', height: '800' }));
    expect(narrow.status).toBe(422);
    expect(narrow.body.errors).toEqual({ width: ['The width field must be between 64 and 5000.'] });
    const tiny = await call(sim, '/api/v1/client/img-rmbg', { form: form({ model: 'Ben2' }, pngImage(32)) });
    expect(tiny.status).toBe(422);
    expect(tiny.body.errors).toEqual({ image: ['The image field has invalid image dimensions.'] });
    const format = await call(sim, '/api/v1/client/img2txt', {
      form: form({ model: 'Nanonets_Ocr_S_F16', format: 'xml' }, pngImage(64)),
    });
    expect(format.body.errors).toEqual({ format: ['The selected format is invalid.'] });
  });
});
