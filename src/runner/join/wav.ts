import { createReadStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { type JoinOutcome, readAt, readParts, writeChunk, writeJoined } from './parts.js';

/**
 * Joins WAV parts exactly: one RIFF/WAVE header, the first part's `fmt ` chunk, one `data` chunk
 * holding every part's samples in order. Other chunks of the parts (LIST, fact, cue …) describe
 * one part, not the whole, and are left out. Parts must agree on format tag, channels, sample
 * rate, bits and block size; each part's samples are copied as a stream, never held whole.
 */

const MAX_RIFF_BYTES = 0xffff_ffff;
// A fmt chunk is 16–40 bytes; anything far larger is not a WAV anyone wrote.
const MAX_FMT_BYTES = 1024;

type WavFormat = ReturnType<typeof formatOf>;

interface WavPart {
  path: string;
  fmt: Buffer;
  format: WavFormat;
  dataStart: number;
  dataBytes: number;
}

function formatOf(fmt: Buffer) {
  const tag = fmt.readUInt16LE(0);
  return {
    tag,
    channels: fmt.readUInt16LE(2),
    sampleRate: fmt.readUInt32LE(4),
    blockAlign: fmt.readUInt16LE(12),
    bits: fmt.readUInt16LE(14),
    // The subformat GUID of WAVE_FORMAT_EXTENSIBLE.
    subformat: tag === 0xfffe && fmt.length >= 40 ? fmt.subarray(24, 40).toString('hex') : '',
  };
}

function describe(format: WavFormat): string {
  const channels = format.channels === 1 ? 'mono' : format.channels === 2 ? 'stereo' : `${format.channels} channels`;
  const kind = format.tag === 1 ? 'PCM' : format.tag === 3 ? 'float' : `format 0x${format.tag.toString(16)}`;
  return `${format.sampleRate} Hz ${channels} ${format.bits}-bit ${kind}`;
}

/** Walks the chunks of one part for `fmt ` and `data`; a string says why it is not a usable WAV. */
async function readPart(path: string): Promise<WavPart | string> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const riff = await readAt(handle, 0, 12);
    if (riff.length < 12 || riff.toString('latin1', 0, 4) !== 'RIFF' || riff.toString('latin1', 8, 12) !== 'WAVE') return 'is not a RIFF/WAVE file';
    let fmt: Buffer | undefined;
    for (let at = 12; at + 8 <= size; ) {
      const head = await readAt(handle, at, 8);
      const id = head.toString('latin1', 0, 4);
      const bytes = head.readUInt32LE(4);
      if (id === 'fmt ') {
        if (bytes < 16 || bytes > MAX_FMT_BYTES) return `has a fmt chunk of ${bytes} bytes`;
        fmt = await readAt(handle, at + 8, bytes);
      } else if (id === 'data') {
        if (fmt === undefined) return 'has its data before its fmt chunk';
        if (at + 8 + bytes > size) return `says its data is ${bytes} bytes but the file ends before that (a stream's header?)`;
        const format = formatOf(fmt);
        if (format.blockAlign === 0 || bytes % format.blockAlign !== 0) return 'does not hold whole sample frames';
        return { path, fmt, format, dataStart: at + 8, dataBytes: bytes };
      }
      at += 8 + bytes + (bytes % 2);
    }
    return fmt === undefined ? 'has no fmt chunk' : 'has no data chunk';
  } finally {
    await handle.close();
  }
}

function header(fmt: Buffer, dataBytes: number): Buffer {
  const fmtPad = fmt.length % 2;
  const out = Buffer.alloc(12 + 8 + fmt.length + fmtPad + 8);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(4 + 8 + fmt.length + fmtPad + 8 + dataBytes + (dataBytes % 2), 4);
  out.write('WAVE', 8, 'latin1');
  out.write('fmt ', 12, 'latin1');
  out.writeUInt32LE(fmt.length, 16);
  fmt.copy(out, 20);
  out.write('data', 20 + fmt.length + fmtPad, 'latin1');
  out.writeUInt32LE(dataBytes, 24 + fmt.length + fmtPad);
  return out;
}

/** Writes `outPath` (replacing it) from the parts in order, or says why they do not join. */
export async function joinWav(partPaths: readonly string[], outPath: string): Promise<JoinOutcome> {
  const parts = await readParts(partPaths, {
    read: readPart,
    same: (first, part) => JSON.stringify(part.format) === JSON.stringify(first.format),
    describe: (part) => describe(part.format),
  });
  if (typeof parts === 'string') return { joined: false, reason: parts };
  const dataBytes = parts.reduce((sum, part) => sum + part.dataBytes, 0);
  const fmt = parts[0]?.fmt ?? Buffer.alloc(0);
  if (12 + 8 + fmt.length + (fmt.length % 2) + dataBytes + (dataBytes % 2) > MAX_RIFF_BYTES) {
    const reason = `the joined samples (${dataBytes} bytes) would not fit in the 4 GB a WAV file can hold`;
    return { joined: false, reason };
  }
  const write = async (out: WriteStream): Promise<undefined> => {
    await writeChunk(out, header(fmt, dataBytes));
    for (const part of parts) {
      if (part.dataBytes === 0) continue;
      // Not pipeline(…, { end: false }): it leaves its listeners on `out`, one set per part.
      const source = createReadStream(part.path, { start: part.dataStart, end: part.dataStart + part.dataBytes - 1 });
      for await (const chunk of source) await writeChunk(out, chunk as Buffer);
    }
  };
  // A chunk of odd size is followed by a pad byte (RIFF's rule), not counted in its size.
  return writeJoined(outPath, write, dataBytes % 2 === 1 ? Buffer.alloc(1) : undefined);
}
