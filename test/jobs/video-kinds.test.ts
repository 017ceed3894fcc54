import { describe, expect, it } from 'vitest';
import { catalogueTypesOf, kindOf, type SendableJob } from '../../src/jobs/index.js';
import { groupKeyOf } from '../../src/pricing/keys.js';

const VIDEO = { path: '/data/a.mp4', written: 'a.mp4', contentType: 'video/mp4', bytes: 10, sha256: 'ab' };
const FRAME = { path: '/data/knight.png', written: 'knight.png', contentType: 'image/png', bytes: 10, sha256: 'cd' };

function job(type: SendableJob['type'], params: Record<string, unknown>, media: SendableJob['media']): SendableJob {
  return { id: 'j', type, params, media };
}

describe('the video kinds price by what their files state, never by uploading them', () => {
  it('vid-rmbg: the video\'s frame size, sent as fields, the video only with the submit', () => {
    const kind = kindOf('vid-rmbg');
    const a = job('vid-rmbg', { model: 'RMBG-1.4', width: 640, height: 360 }, { video: VIDEO });
    expect(kind.pricing.by === 'per-key' && kind.pricing.request(a)).toEqual({
      endpoint: 'vid-rmbg/price-calculation',
      multipart: { fields: { model: 'RMBG-1.4', width: '640', height: '360' }, files: [] },
    });
    const submit = kind.submit(a);
    expect(submit.endpoint).toBe('vid-rmbg');
    expect('multipart' in submit && submit.multipart).toMatchObject({ fields: { model: 'RMBG-1.4' }, files: [{ field: 'video' }] });
    // Another video of the same size shares the price.
    const b = job('vid-rmbg', { model: 'RMBG-1.4', width: 640, height: 360 }, { video: { ...VIDEO, sha256: 'ef' } });
    expect(groupKeyOf(b)).toBe(groupKeyOf(a));
  });

  it("video-replace: at its own paths, by the video's length and the output size (the job's, else the video's)", () => {
    const kind = kindOf('video-replace');
    const facts = { model: 'Wan2_2_Animate_14B_INT8', duration: 5, video_width: 640, video_height: 360 };
    const native = job('video-replace', facts, { video: VIDEO, ref_image: FRAME });
    const price = (one: SendableJob) => (kind.pricing.by === 'per-key' ? kind.pricing.request(one) : undefined);
    expect(price(native)).toEqual({
      endpoint: 'videos/replace/price',
      multipart: { fields: { model: 'Wan2_2_Animate_14B_INT8', duration: '5', width: '640', height: '360' }, files: [] },
    });
    const sized = job('video-replace', { ...facts, width: 320, height: 180 }, { video: VIDEO, ref_image: FRAME });
    expect(price(sized)).toMatchObject({ multipart: { fields: { width: '320', height: '180' } } });
    const submit = kind.submit(sized);
    expect(submit.endpoint).toBe('videos/replace');
    // The facts are the price's: the submit carries the job's own fields and the two files.
    expect('multipart' in submit && submit.multipart).toEqual({
      fields: { model: 'Wan2_2_Animate_14B_INT8', width: '320', height: '180' },
      files: [
        { field: 'video', path: VIDEO.path, contentType: 'video/mp4', filename: 'a.mp4' },
        { field: 'ref_image', path: FRAME.path, contentType: 'image/png', filename: 'knight.png' },
      ],
    });
  });

  it('aud2video: JSON numbers, no sound; its models are audio2video in the catalogue, vid-rmbg has none there', () => {
    const kind = kindOf('aud2video');
    const params = { model: 'Ltx2_3_22B_Dist_INT8', prompt: 'a singer', width: 768, height: 432, frames: 121, fps: 24, seed: 3 };
    expect(kind.pricing.by === 'per-key' && kind.pricing.request(job('aud2video', params, {}))).toEqual({
      endpoint: 'aud2video/price-calculation',
      json: { model: 'Ltx2_3_22B_Dist_INT8', width: 768, height: 432, frames: 121, fps: 24 },
    });
    const names = catalogueTypesOf(['aud2video', 'vid-rmbg', 'video-replace']);
    expect(names).toEqual(['audio2video', 'video-replace']);
  });
});
