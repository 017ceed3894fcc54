import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { media, url } from '../../src/jobs/fields.js';
import type { MediaField } from '../../src/jobs/index.js';
import { checkMedia, fileScope, newFileCache } from '../../src/manifest/files.js';
import { pngImage } from '../../src/sim/results.js';
import { flacStream, mp3Frames, mp4Movie, oggOpus, wavTone, webmMovie } from '../support/media-files.js';

const AUDIO = media('Audio', { audio: 20 }).file as MediaField;
const VIDEO = media('Video', { video: 50 }).file as MediaField;
const EITHER = media('Source', { audio: 20, video: 50 }).file as MediaField;

describe('media files, checked by their bytes with what they state', () => {
  let dir: string;
  const check = async (name: string, bytes: Buffer, field: MediaField) => {
    await writeFile(path.join(dir, name), bytes);
    return checkMedia(newFileCache(await fileScope(dir, false)), path.join(dir, name), field);
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mediabatch-media-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ['a.wav', wavTone(8000, 2.5), 'audio/wav', 2.5],
    ['a.mp3', mp3Frames(3), 'audio/mpeg', 3],
    ['a.flac', flacStream(4), 'audio/flac', 4],
    ['a.ogg', oggOpus(5), 'audio/ogg', 5],
    ['a.m4a', mp4Movie(6, 'soun'), 'audio/mp4', 6],
    ['a.webm', webmMovie(7), 'audio/webm', 7],
  ])('reads the duration of %s as audio', async (name, bytes, contentType, seconds) => {
    const read = await check(name, bytes, AUDIO);
    expect(read.ok && read.value.contentType).toBe(contentType);
    expect(read.ok && read.value.durationSec).toBeCloseTo(seconds, 1);
  });

  it('reads a WebM video frame size and length, and declares it as video', async () => {
    const read = await check('clip.webm', webmMovie(8, 320, 240), VIDEO);
    expect(read).toMatchObject({ ok: true, value: { contentType: 'video/webm', width: 320, height: 240, durationSec: 8 } });
  });

  it('reads an MP4 video frame size and length, with no sound track, and declares it as video', async () => {
    const read = await check('clip.mp4', mp4Movie(4.5, 'vide', 1280, 720), VIDEO);
    expect(read).toMatchObject({ ok: true, value: { contentType: 'video/mp4', width: 1280, height: 720, durationSec: 4.5 } });
    const either = await check('either.mp4', mp4Movie(2), EITHER);
    expect(either.ok && either.value.contentType).toBe('video/mp4');
  });

  it('reads an MP4 whose movie header comes after its media data', async () => {
    const movie = mp4Movie(7, 'vide', 320, 240);
    const [ftyp, moov] = [movie.subarray(0, 28), movie.subarray(28, 28 + movie.readUInt32BE(28))];
    const mdat = Buffer.alloc(3_000_000, 0x5a);
    mdat.writeUInt32BE(mdat.length, 0);
    mdat.write('mdat', 4, 'latin1');
    const read = await check('late.mp4', Buffer.concat([ftyp, mdat, moov]), VIDEO);
    expect(read).toMatchObject({ ok: true, value: { width: 320, height: 240, durationSec: 7 } });
  });

  it('takes a video in a field that takes audio or video, as video', async () => {
    const read = await check('either.webm', webmMovie(3), EITHER);
    expect(read.ok && read.value.contentType).toBe('video/webm');
    const sound = await check('either.wav', wavTone(), EITHER);
    expect(sound.ok && sound.value.contentType).toBe('audio/wav');
  });

  it('says what came when a file is the wrong medium or empty', async () => {
    expect(await check('pic.png', pngImage(), AUDIO)).toEqual({ ok: false, expected: 'an audio file', detail: 'its bytes are PNG, an image' });
    expect(await check('pic2.png', pngImage(), VIDEO)).toEqual({ ok: false, expected: 'a video', detail: 'its bytes are PNG, an image' });
    expect(await check('notes.txt', Buffer.from('hello'), EITHER)).toEqual({
      ok: false,
      expected: 'an audio file or a video',
      detail: 'not an audio file or a video by its bytes',
    });
    expect(await check('empty.mp4', Buffer.alloc(0), VIDEO)).toEqual({ ok: false, expected: 'a video', detail: 'an empty file' });
    const IMAGE = { maxBytes: { image: 10 * 1024 * 1024 } };
    expect(await check('tone.png', wavTone(), IMAGE)).toEqual({
      ok: false,
      expected: 'a JPG, PNG, GIF, BMP or WebP image',
      detail: 'its bytes are WAV, an audio file',
    });
  });

  it("holds each medium to its own size limit in a field that takes both", async () => {
    const small: MediaField = { maxBytes: { audio: 1000, video: 4000 } };
    expect(await check('long.wav', wavTone(8000, 0.2), small)).toEqual({
      ok: false,
      expected: 'an audio file of at most 0.00095367431640625 MB',
      detail: '3244 bytes',
      hint: 'shorten it or recompress it',
    });
    expect((await check('fits.webm', webmMovie(2), small)).ok).toBe(true);
  });

  it('takes only the formats a field lists, when it lists them', async () => {
    const some: MediaField = { maxBytes: { audio: 1e6 }, formats: ['MP3', 'Ogg'] };
    expect(await check('take.wav', wavTone(), some)).toEqual({ ok: false, expected: 'an audio file in MP3 or Ogg', detail: 'its bytes are WAV' });
    expect((await check('take.ogg', oggOpus(1), some)).ok).toBe(true);
  });

  it('refuses a file whose container does not state a fact its kind prices by, and one outside its length', async () => {
    const priced: MediaField = { maxBytes: { video: 1e6 }, facts: { width: 'width', duration: 'durationSec' } };
    // An MP4 cut short after its type box: no movie header, so neither size nor length.
    expect(await check('movie.mp4', mp4Movie(5).subarray(0, 28), priced)).toEqual({
      ok: false,
      expected: 'a video whose container states its width and duration',
      detail: 'MP4/MOV/M4A, its width and duration not found',
    });
    const bounded: MediaField = { maxBytes: { audio: 1e6 }, durationSec: { min: 3, max: 10 } };
    expect(await check('short.wav', wavTone(8000, 1), bounded)).toEqual({ ok: false, expected: 'an audio file of 3 to 10 seconds', detail: '1.0 seconds long' });
  });
});

describe('URL fields', () => {
  it('take http and https, and refuse every other scheme', () => {
    const { schema } = url('Where the audio is');
    expect(schema.safeParse('https://example.com/a.mp3').success).toBe(true);
    expect(schema.safeParse('http://example.com/a.mp3').success).toBe(true);
    for (const refused of ['file:///etc/passwd', 'ftp://example.com/a.mp3', 'data:audio/mp3;base64,AAAA', 'example.com/a.mp3']) {
      expect(schema.safeParse(refused).success, refused).toBe(false);
    }
  });
});
