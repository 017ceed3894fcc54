import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { joinParts, joinsExactly, playlistText } from '../../../src/runner/join-splits.js';
import { joinMp3 } from '../../../src/runner/join/mp3.js';
import { folder, removeFolders, writeParts } from './helpers.js';

afterEach(removeFolders);

/**
 * Real MPEG audio frame headers, built here from the standard's tables rather than taken from the
 * code under test: MPEG-2 layer III at 24 kHz, 64 kbit/s (72 × 64000 / 24000 = 192 bytes a
 * frame), as speech services produce, and the same at 16 kHz (288 bytes); MPEG-1 layer III at
 * 44.1 kHz, 128 kbit/s (417 bytes).
 */
const SPEECH = { header: [0xff, 0xf3, 0x84, 0xc4], bytes: 192, sideInfo: 9 };
const MUSIC = { header: [0xff, 0xfb, 0x90, 0x44], bytes: 417, sideInfo: 32 };
const SPEECH_16K = { header: [0xff, 0xf3, 0x88, 0xc4], bytes: 288, sideInfo: 9 };

type Kind = typeof SPEECH;

function frame(kind: Kind, fill: number): Buffer {
  const bytes = Buffer.alloc(kind.bytes, fill);
  Buffer.from(kind.header).copy(bytes, 0);
  return bytes;
}

function infoFrame(kind: Kind, tag: 'Xing' | 'Info' | 'VBRI'): Buffer {
  const bytes = frame(kind, 0);
  bytes.write(tag, tag === 'VBRI' ? 36 : 4 + kind.sideInfo, 'latin1');
  return bytes;
}

function id3v2(payloadBytes: number): Buffer {
  const tag = Buffer.alloc(10 + payloadBytes, 0x41);
  tag.write('ID3', 0, 'latin1');
  tag.set([4, 0, 0], 3);
  tag.set([(payloadBytes >> 21) & 0x7f, (payloadBytes >> 14) & 0x7f, (payloadBytes >> 7) & 0x7f, payloadBytes & 0x7f], 6);
  return tag;
}

function id3v1(): Buffer {
  const tag = Buffer.alloc(128, 0x20);
  tag.write('TAG', 0, 'latin1');
  return tag;
}

describe('joinMp3', () => {
  test('the audio frames of every part in order; ID3v2, ID3v1 and the Xing/Info/VBRI frames dropped', async () => {
    const dir = await folder();
    const a = [frame(SPEECH, 1), frame(SPEECH, 2)];
    const b = [frame(SPEECH, 3)];
    const c = [frame(SPEECH, 4), frame(SPEECH, 5), frame(SPEECH, 6)];
    const paths = await writeParts(dir, {
      'p001.mp3': Buffer.concat([id3v2(300), infoFrame(SPEECH, 'Xing'), ...a, id3v1()]),
      'p002.mp3': Buffer.concat([infoFrame(SPEECH, 'VBRI'), ...b]),
      'p003.mp3': Buffer.concat([id3v2(20), infoFrame(SPEECH, 'Info'), ...c, Buffer.alloc(37)]),
    });
    const out = join(dir, 'joined.mp3');
    const expected = Buffer.concat([...a, ...b, ...c]);
    expect(await joinMp3(paths, out)).toEqual({ joined: true, bytes: expected.length });
    expect(await readFile(out)).toEqual(expected);
  });

  test('MPEG-1 frames, and a first frame that is audio is kept', async () => {
    const dir = await folder();
    const frames = Array.from({ length: 200 }, (_, i) => frame(MUSIC, i & 0x7f));
    const paths = await writeParts(dir, { 'a.mp3': Buffer.concat(frames.slice(0, 120)), 'b.mp3': Buffer.concat(frames.slice(120)) });
    const out = join(dir, 'ab.mp3');
    expect((await joinMp3(paths, out)).joined).toBe(true);
    expect(await readFile(out)).toEqual(Buffer.concat(frames));
  });

  test('refused, with the reason, for parts that differ or are not clean MPEG audio; nothing is written', async () => {
    const dir = await folder();
    const good = Buffer.concat([frame(SPEECH, 1), frame(SPEECH, 2)]);
    const [base = '', ...others] = await writeParts(dir, {
      'p001.mp3': good,
      'rate.mp3': Buffer.concat([frame(SPEECH_16K, 1)]),
      'stereo.mp3': frame({ ...SPEECH, header: [0xff, 0xf3, 0x84, 0x44] }, 1),
      'music.mp3': frame(MUSIC, 1),
      'wav.mp3': Buffer.from('RIFF\x00\x00\x00\x00WAVE', 'latin1'),
      'junk.mp3': Buffer.concat([frame(SPEECH, 1), Buffer.from('junk'), frame(SPEECH, 2)]),
      'switch.mp3': Buffer.concat([frame(SPEECH, 1), frame(SPEECH_16K, 2)]),
      'cut.mp3': Buffer.concat([frame(SPEECH, 1), frame(SPEECH, 2).subarray(0, 100)]),
      'tagonly.mp3': id3v2(50),
    });
    const out = join(dir, 'out.mp3');
    const reasons: string[] = [];
    for (const other of others) {
      const outcome = await joinMp3([base, other], out);
      if (!outcome.joined) reasons.push(outcome.reason);
      await expect(stat(out)).rejects.toThrow(/ENOENT/);
    }
    expect(reasons).toMatchInlineSnapshot(`
      [
        "part 2 (rate.mp3) is MPEG-2 layer III 16000 Hz mono, part 1 (p001.mp3) is MPEG-2 layer III 24000 Hz mono",
        "part 2 (stereo.mp3) is MPEG-2 layer III 24000 Hz stereo, part 1 (p001.mp3) is MPEG-2 layer III 24000 Hz mono",
        "part 2 (music.mp3) is MPEG-1 layer III 44100 Hz stereo, part 1 (p001.mp3) is MPEG-2 layer III 24000 Hz mono",
        "part 2 (wav.mp3) does not start with an MPEG audio frame",
        "part 2 (junk.mp3) has bytes that are not MPEG audio at offset 192",
        "part 2 (switch.mp3) changes to MPEG-2 layer III 16000 Hz mono at offset 192",
        "part 2 (cut.mp3) ends in the middle of a frame",
        "part 2 (tagonly.mp3) does not start with an MPEG audio frame after its ID3 tag",
      ]
    `);
  });
});

describe('which formats join, and the playlist', () => {
  test('WAV and MP3 join; FLAC and the rest are refused with the reason', async () => {
    expect(['wav', '.MP3', 'flac', 'ogg'].map(joinsExactly)).toEqual([true, true, false, false]);
    const dir = await folder();
    const paths = await writeParts(dir, { 'a.flac': Buffer.from('fLaC'), 'b.flac': Buffer.from('fLaC') });
    expect(await joinParts('flac', paths, join(dir, 'ab.flac'))).toEqual({
      joined: false,
      reason: 'flac parts are not joined (only wav and mp3 join exactly); the playlist lists them',
    });
    await expect(stat(join(dir, 'ab.flac'))).rejects.toThrow(/ENOENT/);
  });

  test('the m3u lists the parts by name, in order, after #EXTM3U', async () => {
    expect(playlistText(['ch-01.p001.flac', 'ch-01.p002.flac', 'ch-01.p003.flac'])).toBe('#EXTM3U\nch-01.p001.flac\nch-01.p002.flac\nch-01.p003.flac\n');
    expect(() => playlistText(['a\nb.mp3'])).toThrow('not a playlist entry: "a\\nb.mp3"');
  });
});
