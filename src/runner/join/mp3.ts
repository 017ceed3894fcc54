import { createReadStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { describeStream, type FrameHeader, frameHeaderAt, id3v2Bytes, isInfoFrame, sameStream, trailingTagBytes } from './mp3-frames.js';
import { type JoinOutcome, partName, readAt, readParts, writeChunk, writeJoined } from './parts.js';

/**
 * Joins MP3 parts by their frames: every part's MPEG audio frames, in order, and nothing else.
 * Dropped from every part, the first one included: its ID3v2 tag (a part's title and length are
 * wrong for the whole), an ID3v1 or APEv2 tag at its end, and the Xing/Info/VBRI frame an
 * encoder puts first (its frame count and seek table describe that part alone; a player would
 * stop after the first part or seek wrongly). Parts must share MPEG version, layer, sample rate
 * and mono/stereo; bitrates may differ. Anything between frames but zero padding at the end is
 * refused rather than guessed at. Each part is streamed, never held whole.
 */

const TAIL_BYTES = 128 + 32;

interface Mp3Part {
  path: string;
  /** Where the audio frames start and end, tags left out. */
  start: number;
  end: number;
  first: FrameHeader;
}

async function probe(path: string): Promise<Mp3Part | string> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const start = id3v2Bytes(await readAt(handle, 0, 10));
    const end = size - trailingTagBytes(await readAt(handle, Math.max(0, size - TAIL_BYTES), Math.min(size, TAIL_BYTES)));
    const first = frameHeaderAt(await readAt(handle, start, 4), 0);
    if (start >= end || first === undefined) return `does not start with an MPEG audio frame${start > 0 ? ' after its ID3 tag' : ''}`;
    return { path, start, end, first };
  } finally {
    await handle.close();
  }
}

/** Copies one part's frames to `out`; a string says why the part is not clean MPEG audio. */
async function copyFrames(part: Mp3Part, label: string, expected: FrameHeader, out: WriteStream): Promise<string | undefined> {
  let carry = Buffer.alloc(0);
  let offset = part.start;
  let first = true;
  let padding = false;
  for await (const chunk of createReadStream(part.path, { start: part.start, end: part.end - 1 }) as AsyncIterable<Buffer>) {
    const bytes = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let at = 0;
    let keptFrom = 0;
    while (!padding && at + 4 <= bytes.length) {
      const header = frameHeaderAt(bytes, at);
      if (header === undefined) {
        if (bytes[at] !== 0) return `${label} has bytes that are not MPEG audio at offset ${offset + at}`;
        padding = true;
        break;
      }
      if (!sameStream(expected, header)) return `${label} changes to ${describeStream(header)} at offset ${offset + at}`;
      if (at + header.bytes > bytes.length) break;
      if (first && isInfoFrame(bytes, at, header)) {
        await writeChunk(out, bytes.subarray(keptFrom, at));
        keptFrom = at + header.bytes;
      }
      first = false;
      at += header.bytes;
    }
    await writeChunk(out, bytes.subarray(keptFrom, at));
    if (padding) {
      if (bytes.subarray(at).some((byte) => byte !== 0)) return `${label} has bytes that are not MPEG audio after offset ${offset + at}`;
      carry = Buffer.alloc(0);
      offset += bytes.length;
      continue;
    }
    carry = Buffer.from(bytes.subarray(at));
    offset += at;
  }
  return carry.length > 0 ? `${label} ends in the middle of a frame` : undefined;
}

/** Writes `outPath` (replacing it) from the parts' frames in order, or says why they do not join. */
export async function joinMp3(partPaths: readonly string[], outPath: string): Promise<JoinOutcome> {
  const parts = await readParts(partPaths, {
    read: probe,
    same: (first, part) => sameStream(first.first, part.first),
    describe: (part) => describeStream(part.first),
  });
  if (typeof parts === 'string') return { joined: false, reason: parts };
  const expected = parts[0]?.first as FrameHeader;
  return writeJoined(outPath, async (out) => {
    for (const [index, part] of parts.entries()) {
      const problem = await copyFrames(part, partName(index, part.path), expected, out);
      if (problem !== undefined) return problem;
    }
    return undefined;
  });
}
