/**
 * Small but real media files, built byte by byte so the tests need no encoder: each carries the
 * duration (and a video its size) where its container states it, which is all a metadata reader
 * looks at. None is meant to be played.
 */
import { wavTone } from '../../src/sim/results.js';

export { wavTone };

const box = (type: string, ...payload: Buffer[]): Buffer => {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
};

const u32 = (...values: number[]): Buffer => {
  const buf = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => buf.writeUInt32BE(value, 4 * i));
  return buf;
};

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: enough frames for `seconds` (1152 samples a frame). */
export function mp3Frames(seconds: number): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: Math.round((seconds * 44100) / 1152) }, () => frame));
}

/** A FLAC stream: the marker and a STREAMINFO block stating 44.1 kHz mono and its sample count. */
export function flacStream(seconds: number): Buffer {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(4096, 0);
  info.writeUInt16BE(4096, 2);
  const samples = Math.round(seconds * 44100);
  // 20 bits of sample rate, 3 of channels - 1, 5 of bits per sample - 1, 36 of total samples.
  const packed = (BigInt(44100) << 44n) | (0n << 41n) | (15n << 36n) | BigInt(samples);
  info.writeBigUInt64BE(packed, 10);
  const header = Buffer.from([0x80, 0, 0, 34]); // last block, STREAMINFO, 34 bytes
  return Buffer.concat([Buffer.from('fLaC'), header, info]);
}

/** An Ogg page with its CRC (the polynomial Ogg uses, not zlib's). */
function oggPage(serial: number, sequence: number, granule: bigint, flags: number, packet: Buffer): Buffer {
  const head = Buffer.alloc(27);
  head.write('OggS', 0, 'latin1');
  head.writeUInt8(flags, 5);
  head.writeBigUInt64LE(granule, 6);
  head.writeUInt32LE(serial, 14);
  head.writeUInt32LE(sequence, 18);
  head.writeUInt8(1, 26);
  const page = Buffer.concat([head, Buffer.from([packet.length]), packet]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

function oggCrc(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

/** Ogg Opus: its head, its tags, and a last page whose granule (48 kHz samples) gives the duration. */
export function oggOpus(seconds: number): Buffer {
  const opusHead = Buffer.alloc(19);
  opusHead.write('OpusHead', 0, 'latin1');
  opusHead.set([1, 1], 8);
  opusHead.writeUInt32LE(48000, 12);
  const tags = Buffer.concat([Buffer.from('OpusTags'), Buffer.from([4, 0, 0, 0]), Buffer.from('test'), Buffer.alloc(4)]);
  const audio = Buffer.from([0xf8, 0xff, 0xfe]);
  const granule = BigInt(Math.round(seconds * 48000));
  return Buffer.concat([oggPage(7, 0, 0n, 2, opusHead), oggPage(7, 1, 0n, 0, tags), oggPage(7, 2, granule, 4, audio)]);
}

/** An MP4 (`isom`) with one track of `handler` ('vide' or 'soun') and a movie header stating its length. */
export function mp4Movie(seconds: number, handler: 'vide' | 'soun' = 'vide', width = 640, height = 360): Buffer {
  const timescale = 1000;
  const mvhd = box('mvhd', u32(0, 0, 0, timescale, Math.round(seconds * timescale), 0x00010000), Buffer.alloc(76));
  const tkhd = box('tkhd', u32(1, 0, 0, 1, 0, Math.round(seconds * timescale)), Buffer.alloc(52), u32(width * 65536, height * 65536));
  const hdlr = box('hdlr', u32(0, 0), Buffer.from(handler), Buffer.alloc(13));
  const mdhd = box('mdhd', u32(0, 0, 0, timescale, Math.round(seconds * timescale)), Buffer.alloc(4));
  // A sound track needs its sample entry (AAC, stereo, 16 bits, 44.1 kHz) for a reader to count it as audio.
  const mp4a = box('mp4a', Buffer.alloc(6), Buffer.from([0, 1]), Buffer.alloc(8), Buffer.from([0, 2, 0, 16, 0, 0, 0, 0]), u32(44100 * 65536));
  // A video track's sample entry (AVC) states its coded size, as every encoder writes it.
  const sizes = Buffer.from([width >> 8, width & 0xff, height >> 8, height & 0xff]);
  const avc1 = box('avc1', Buffer.alloc(6), Buffer.from([0, 1]), Buffer.alloc(16), sizes, u32(0x480000, 0x480000, 0),
    Buffer.from([0, 1]), Buffer.alloc(32), Buffer.from([0, 0x18, 0xff, 0xff]));
  const stsd = box('stsd', u32(0, 1), handler === 'soun' ? mp4a : avc1);
  const tables = [box('stts', u32(0, 0)), box('stsc', u32(0, 0)), box('stsz', u32(0, 0, 0)), box('stco', u32(0, 0))];
  const minf = box('minf', box('stbl', stsd, ...tables));
  const trak = box('trak', tkhd, box('mdia', mdhd, hdlr, minf));
  const ftyp = box('ftyp', Buffer.from('isom'), u32(0x200), Buffer.from('isomiso2mp41'));
  return Buffer.concat([ftyp, box('moov', mvhd, trak), box('mdat', Buffer.alloc(512, 0x5a))]);
}

/** An EBML element: its id, its size (8 bytes), its body. */
function ebml(id: number[], ...body: Buffer[]): Buffer {
  const data = Buffer.concat(body);
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(data.length) | (1n << 56n), 0);
  return Buffer.concat([Buffer.from(id), size, data]);
}

const uint = (value: number): Buffer => {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(value, 0);
  return buf;
};

/** A WebM with one video track of `width`×`height` and a segment that states its duration. */
export function webmMovie(seconds: number, width = 640, height = 360): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], ebml([0x42, 0x82], Buffer.from('webm')), ebml([0x42, 0x87], uint(4)));
  const duration = Buffer.alloc(8);
  duration.writeDoubleBE(seconds * 1000, 0);
  const info = ebml([0x15, 0x49, 0xa9, 0x66], ebml([0x2a, 0xd7, 0xb1], uint(1_000_000)), ebml([0x44, 0x89], duration));
  const video = ebml([0xe0], ebml([0xb0], uint(width)), ebml([0xba], uint(height)));
  const entry = ebml([0xae], ebml([0xd7], uint(1)), ebml([0x83], uint(1)), ebml([0x86], Buffer.from('V_VP9')), video);
  return Buffer.concat([header, ebml([0x18, 0x53, 0x80, 0x67], info, ebml([0x16, 0x54, 0xae, 0x6b], entry))]);
}

