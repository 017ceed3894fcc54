/**
 * MPEG audio frame headers (ISO 11172-3 / 13818-3): enough to walk a stream frame by frame, tell
 * whether two streams can be played as one, and spot the Xing/Info/VBRI frame an encoder puts
 * first (it carries a frame count and a seek table for its own file only).
 */
export interface FrameHeader {
  /** 1 (MPEG-1), 2 (MPEG-2) or 2.5. */
  version: 1 | 2 | 2.5;
  layer: 1 | 2 | 3;
  sampleRate: number;
  bitrateKbps: number;
  mono: boolean;
  /** Frame length in bytes, header included. */
  bytes: number;
  /** A 16-bit CRC follows the header. */
  crc: boolean;
}

const BITRATES_KBPS: Record<string, readonly number[]> = {
  '1-1': [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '1-2': [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-3': [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2-1': [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  '2-2': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-3': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<string, readonly number[]> = { '1': [44100, 48000, 32000], '2': [22050, 24000, 16000], '2.5': [11025, 12000, 8000] };
const VERSIONS = [2.5, undefined, 2, 1] as const;
const LAYERS = [undefined, 3, 2, 1] as const;

/** The frame header at `at`, or undefined when the bytes there are not one (free-format frames included). */
export function frameHeaderAt(bytes: Buffer, at: number): FrameHeader | undefined {
  if (at + 4 > bytes.length) return undefined;
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0] = bytes.subarray(at, at + 4);
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = VERSIONS[(b1 >> 3) & 3];
  const layer = LAYERS[(b1 >> 1) & 3];
  if (version === undefined || layer === undefined) return undefined;
  const bitrateKbps = BITRATES_KBPS[`${version === 1 ? 1 : 2}-${layer}`]?.[(b2 >> 4) & 0xf] ?? 0;
  const sampleRate = SAMPLE_RATES[String(version)]?.[(b2 >> 2) & 3];
  if (bitrateKbps === 0 || sampleRate === undefined) return undefined;
  const padding = (b2 >> 1) & 1;
  const bytesLong =
    layer === 1
      ? (Math.floor((12 * bitrateKbps * 1000) / sampleRate) + padding) * 4
      : Math.floor(((layer === 3 && version !== 1 ? 72 : 144) * bitrateKbps * 1000) / sampleRate) + padding;
  return { version, layer, sampleRate, bitrateKbps, mono: (b3 >> 6) === 3, bytes: bytesLong, crc: (b1 & 1) === 0 };
}

/** Whether a frame of this header starts a stream that can play after one of `first`'s. */
export function sameStream(first: FrameHeader, other: FrameHeader): boolean {
  return first.version === other.version && first.layer === other.layer && first.sampleRate === other.sampleRate && first.mono === other.mono;
}

export function describeStream(header: FrameHeader): string {
  return `MPEG-${header.version} layer ${'I'.repeat(header.layer)} ${header.sampleRate} Hz ${header.mono ? 'mono' : 'stereo'}`;
}

/**
 * Whether the frame at `at` is an encoder's info frame (Xing, Info or VBRI) rather than audio:
 * its tag sits right after the side information (Xing/Info) or 32 bytes in (VBRI).
 */
export function isInfoFrame(bytes: Buffer, at: number, header: FrameHeader): boolean {
  if (header.layer !== 3) return false;
  const sideInfo = header.version === 1 ? (header.mono ? 17 : 32) : header.mono ? 9 : 17;
  const tagAt = (offset: number) => bytes.toString('latin1', at + offset, at + offset + 4);
  const xingAt = 4 + sideInfo;
  return ['Xing', 'Info'].includes(tagAt(xingAt)) || ['Xing', 'Info'].includes(tagAt(xingAt + 2)) || tagAt(36) === 'VBRI';
}

/** Where audio starts: after an ID3v2 tag (and its footer) when the file begins with one. */
export function id3v2Bytes(head: Buffer): number {
  if (head.length < 10 || head.toString('latin1', 0, 3) !== 'ID3') return 0;
  const [, , , , , flags = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0] = head;
  const size = ((s0 & 0x7f) << 21) | ((s1 & 0x7f) << 14) | ((s2 & 0x7f) << 7) | (s3 & 0x7f);
  return 10 + size + (flags & 0x10 ? 10 : 0);
}

/** Bytes of ID3v1 ("TAG", 128 bytes) and APEv2 tags at the end of a file, given its last bytes. */
export function trailingTagBytes(tail: Buffer): number {
  let cut = 0;
  if (tail.length >= 128 && tail.toString('latin1', tail.length - 128, tail.length - 125) === 'TAG') cut += 128;
  const footer = tail.length - cut - 32;
  if (footer >= 0 && tail.toString('latin1', footer, footer + 8) === 'APETAGEX') {
    const size = tail.readUInt32LE(footer + 12);
    const hasHeader = (tail.readUInt32LE(footer + 20) & 0x8000_0000) !== 0;
    cut += size + (hasHeader ? 32 : 0);
  }
  return cut;
}
