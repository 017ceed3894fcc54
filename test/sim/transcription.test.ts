import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { mp3Frames } from '../support/media-files.js';
import { call, FAST, startSimulator } from './helpers.js';

const form = (fields: Record<string, string>, files: Record<string, Buffer> = {}): FormData => {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  for (const [name, bytes] of Object.entries(files)) body.append(name, new Blob([bytes]), `${name}.bin`);
  return body;
};

const WHISPER = { model: 'WhisperLargeV3', include_ts: '0' };
const price = (kind: string, body: FormData) => call(sim, `/api/v1/client/${kind}/price-calculation`, { form: body });
let sim: Simulator;

describe('simulator: the transcription kinds check their source as the service does', () => {
  afterEach(async () => {
    await sim?.close();
  });

  it('prices a file by its length in started seconds, the same as by those seconds given', async () => {
    sim = await startSimulator(FAST);
    const audio = mp3Frames(3.5);
    const byFile = await price('audiofile2txt', form(WHISPER, { audio }));
    const bySeconds = await price('audiofile2txt', form({ ...WHISPER, duration_seconds: '4' }));
    expect(byFile.status).toBe(200);
    expect(byFile.body).toEqual(bySeconds.body);
    // Transcribe takes the file under its own name and the same law.
    expect((await price('transcribe', form(WHISPER, { source_file: audio }))).body).toEqual(bySeconds.body);
  });

  it('refuses a fraction of a second where the service takes an integer, two sources, and none', async () => {
    sim = await startSimulator(FAST);
    const fraction = await price('videofile2txt', form({ ...WHISPER, duration_seconds: '4.5' }));
    expect(fraction.body).toMatchObject({ errors: { duration_seconds: ['The duration seconds field must be an integer.'] } });
    const both = await price('transcribe', form({ ...WHISPER, source_url: 'https://x.com/i/spaces/1', duration_seconds: '4' }));
    const prohibits = 'The source url field prohibits duration seconds from being present.';
    expect(both.body).toMatchObject({ errors: { source_url: [prohibits] } });
    const none = await call(sim, '/api/v1/client/vid2txt', { json: { model: 'WhisperLargeV3', include_ts: false } });
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({ errors: { video_url: ['The video url field is required.'] } });
    const local = await call(sim, '/api/v1/client/aud2txt', { json: { ...WHISPER, audio_url: 'file:///tmp/a.mp3' } });
    expect(local.body).toMatchObject({ errors: { audio_url: ['The audio url field must be a valid URL.'] } });
    expect(sim.stats.accepted).toHaveLength(0);
  });
});
