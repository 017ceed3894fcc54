import { describe, expect, it } from 'vitest';
import { kindOf } from '../../src/jobs/index.js';
import { jobFromRow } from '../../src/runner/ingest.js';
import type { JobRow } from '../../src/store/index.js';

describe('the media a job sends, as the ledger keeps them', () => {
  const params = { model: 'Ltxv', prompt: 'waves', width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 };
  const row = (filesJson: string) => ({ id: 'j', type: 'img2video', paramsJson: JSON.stringify(params), text: null, textChars: null, filesJson }) as JobRow;

  it('reads a row written when jobs sent only images, and sends it as it was sent then', () => {
    // The shape rows had before audio and video: no duration or size.
    const old = '{"first_frame_image":{"path":"/data/beach.png","written":"beach.png","contentType":"image/png","bytes":10,"sha256":"ab"}}';
    const job = jobFromRow(row(old));
    expect(job.media['first_frame_image']).toEqual({ path: '/data/beach.png', written: 'beach.png', contentType: 'image/png', bytes: 10, sha256: 'ab' });
    const request = kindOf('img2video').submit(job);
    expect('multipart' in request && request.multipart.files).toEqual([
      { field: 'first_frame_image', path: '/data/beach.png', contentType: 'image/png', filename: 'beach.png' },
    ]);
  });

  it('keeps what a video stated', () => {
    const clip = { path: '/data/clip.webm', written: 'clip.webm', contentType: 'video/webm', bytes: 99, sha256: 'cd', durationSec: 5, width: 640, height: 360 };
    expect(jobFromRow({ ...row(JSON.stringify({ video: clip })), type: 'vid-upscale' }).media['video']).toEqual(clip);
  });
});
