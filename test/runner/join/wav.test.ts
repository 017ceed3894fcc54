import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { joinWav } from '../../../src/runner/join/wav.js';
import { wavTone } from '../../../src/sim/results.js';
import { chunk, fmtPayload, folder, removeFolders, riff, writeParts } from './helpers.js';

afterEach(removeFolders);

describe('joinWav', () => {
  test('one header, the data chunks in order; LIST and fact chunks of the parts left out; odd sizes padded', async () => {
    const dir = await folder();
    const fmt = fmtPayload(8000, 1, 8);
    const a = Buffer.from([1, 2, 3]);
    const b = Buffer.from([4, 5, 6, 7, 8]);
    const c = Buffer.from([9, 10, 11]);
    const paths = await writeParts(dir, {
      'p001.wav': riff([chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00test\x00', 'latin1')), chunk('fmt ', fmt), chunk('data', a)]),
      'p002.wav': riff([chunk('fmt ', fmt), chunk('fact', Buffer.from([5, 0, 0, 0])), chunk('data', b), chunk('LIST', Buffer.from('INFO', 'latin1'))]),
      'p003.wav': riff([chunk('fmt ', fmt), chunk('data', c)]),
    });
    const out = join(dir, 'joined.wav');
    const outcome = await joinWav(paths, out);
    const expected = riff([chunk('fmt ', fmt), chunk('data', Buffer.concat([a, b, c]))]);
    expect(outcome).toEqual({ joined: true, bytes: expected.length });
    expect(await readFile(out)).toEqual(expected);
  });

  test("the simulator's speech results join byte for byte", async () => {
    const dir = await folder();
    const first = wavTone(24000, 0.25);
    const second = wavTone(24000, 0.1);
    const paths = await writeParts(dir, { 'a.wav': first, 'b.wav': second });
    const out = join(dir, 'ab.wav');
    expect((await joinWav(paths, out)).joined).toBe(true);
    const joined = await readFile(out);
    const samples = Buffer.concat([first.subarray(44), second.subarray(44)]);
    const expected = riff([chunk('fmt ', first.subarray(20, 36)), chunk('data', samples)]);
    expect(joined).toEqual(expected);
    // As long as both tones together: 0.35 s of 16-bit mono at 24 kHz.
    expect(joined.readUInt32LE(40)).toBe(Math.round(24000 * 0.25) * 2 + Math.round(24000 * 0.1) * 2);
  });

  test('parts of a few megabytes are streamed through', async () => {
    const dir = await folder();
    const fmt = fmtPayload(48000, 2, 16);
    const big = Buffer.alloc(3 * 1024 * 1024 + 4);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
    const paths = await writeParts(dir, { 'a.wav': riff([chunk('fmt ', fmt), chunk('data', big)]), 'b.wav': riff([chunk('fmt ', fmt), chunk('data', big)]) });
    const out = join(dir, 'big.wav');
    expect((await joinWav(paths, out)).joined).toBe(true);
    expect((await stat(out)).size).toBe(44 + 2 * big.length);
    const joined = await readFile(out);
    expect(joined.subarray(44 + big.length).equals(big)).toBe(true);
  });

  test('refused, with the reason, when the parts differ or are not WAV; nothing is written', async () => {
    const dir = await folder();
    const mono16 = riff([chunk('fmt ', fmtPayload(24000, 1, 16)), chunk('data', Buffer.alloc(4))]);
    const cases: Record<string, Buffer> = {
      'rate.wav': riff([chunk('fmt ', fmtPayload(22050, 1, 16)), chunk('data', Buffer.alloc(4))]),
      'stereo.wav': riff([chunk('fmt ', fmtPayload(24000, 2, 16)), chunk('data', Buffer.alloc(4))]),
      'float.wav': riff([chunk('fmt ', fmtPayload(24000, 1, 32, 3)), chunk('data', Buffer.alloc(4))]),
      'notwav.wav': Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00 an mp3, say', 'latin1'),
      'nodata.wav': riff([chunk('fmt ', fmtPayload(24000, 1, 16))]),
      'datafirst.wav': riff([chunk('data', Buffer.alloc(4)), chunk('fmt ', fmtPayload(24000, 1, 16))]),
      'short.wav': riff([chunk('fmt ', fmtPayload(24000, 1, 16)), chunk('data', Buffer.alloc(4))]).subarray(0, 46),
      'half.wav': riff([chunk('fmt ', fmtPayload(24000, 1, 16)), chunk('data', Buffer.alloc(3))]),
    };
    const [base = '', ...others] = await writeParts(dir, { 'p001.wav': mono16, ...cases });
    const out = join(dir, 'out.wav');
    const reasons: string[] = [];
    for (const other of others) {
      const outcome = await joinWav([base, other], out);
      if (!outcome.joined) reasons.push(outcome.reason);
      await expect(stat(out)).rejects.toThrow(/ENOENT/);
    }
    expect(reasons).toMatchInlineSnapshot(`
      [
        "part 2 (rate.wav) is 22050 Hz mono 16-bit PCM, part 1 (p001.wav) is 24000 Hz mono 16-bit PCM",
        "part 2 (stereo.wav) is 24000 Hz stereo 16-bit PCM, part 1 (p001.wav) is 24000 Hz mono 16-bit PCM",
        "part 2 (float.wav) is 24000 Hz mono 32-bit float, part 1 (p001.wav) is 24000 Hz mono 16-bit PCM",
        "part 2 (notwav.wav) is not a RIFF/WAVE file",
        "part 2 (nodata.wav) has no data chunk",
        "part 2 (datafirst.wav) has its data before its fmt chunk",
        "part 2 (short.wav) says its data is 4 bytes but the file ends before that (a stream's header?)",
        "part 2 (half.wav) does not hold whole sample frames",
      ]
    `);
  });
});
