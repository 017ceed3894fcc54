import { type FileHandle, open } from 'node:fs/promises';
import type { Movie } from 'mp4box';

/**
 * What a file is by its first bytes, never by its name or a server's word: one table for the
 * whole tool. The manifest checks input files with it and the runner checks results. It
 * imports nothing of the project's, so any layer may use it (the simulator too).
 */

export type ImageMime = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/bmp' | 'image/webp';
/** What a kind makes: a file of media, or a text (transcripts, OCR) or an embedding, written as files of our own. */
export type MediaKind = FileMedia | 'text' | 'embedding';
/** What a file given to a kind (or a sniffed signature) can be. */
export type FileMedia = 'image' | 'audio' | 'video';

export interface MediaSignature {
  /** e.g. 'WAV', 'MP4/MOV/M4A' — for messages. */
  name: string;
  mime: string;
  /** What a file of this format can hold: an MP4 box carries audio or video, a GIF an image or a clip. */
  kinds: readonly FileMedia[];
}

/** Enough of a file's start for every signature below. */
export const SNIFF_BYTES = 64;

const ascii = (b: Buffer, from: number, to: number): string => b.subarray(from, to).toString('latin1');
const hexStart = (b: Buffer, hex: string): boolean => b.subarray(0, hex.length / 2).equals(Buffer.from(hex, 'hex'));
const riff = (b: Buffer, form: string): boolean => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === form;

const SIGNATURES: readonly (MediaSignature & { test: (b: Buffer) => boolean })[] = [
  { name: 'JPEG', mime: 'image/jpeg', kinds: ['image'], test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { name: 'PNG', mime: 'image/png', kinds: ['image'], test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { name: 'GIF', mime: 'image/gif', kinds: ['image', 'video'], test: (b) => ['GIF87a', 'GIF89a'].includes(ascii(b, 0, 6)) },
  { name: 'BMP', mime: 'image/bmp', kinds: ['image'], test: (b) => b.length >= 26 && ascii(b, 0, 2) === 'BM' },
  { name: 'WebP', mime: 'image/webp', kinds: ['image'], test: (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP' },
  { name: 'WAV', mime: 'audio/wav', kinds: ['audio'], test: (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WAVE' },
  { name: 'MP3', mime: 'audio/mpeg', kinds: ['audio'], test: (b) => ascii(b, 0, 3) === 'ID3' },
  // An MPEG audio frame (MP3 without a tag) or an ADTS AAC frame: eleven set bits of frame sync.
  { name: 'MPEG audio', mime: 'audio/mpeg', kinds: ['audio'], test: (b) => b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 },
  { name: 'FLAC', mime: 'audio/flac', kinds: ['audio'], test: (b) => ascii(b, 0, 4) === 'fLaC' },
  { name: 'Ogg', mime: 'audio/ogg', kinds: ['audio', 'video'], test: (b) => ascii(b, 0, 4) === 'OggS' },
  // ISO base media (MP4, MOV, M4A): the first box is `ftyp`, its type at offset 4.
  { name: 'MP4/MOV/M4A', mime: 'video/mp4', kinds: ['audio', 'video'], test: (b) => ascii(b, 4, 8) === 'ftyp' },
  { name: 'AVI', mime: 'video/x-msvideo', kinds: ['video'], test: (b) => riff(b, 'AVI ') },
  // ASF holds WMV and WMA; an MPEG program stream starts with a pack header.
  { name: 'ASF/WMV', mime: 'video/x-ms-asf', kinds: ['audio', 'video'], test: (b) => hexStart(b, '3026b2758e66cf11') },
  { name: 'MPEG video', mime: 'video/mpeg', kinds: ['video'], test: (b) => hexStart(b, '000001ba') },
  { name: 'WebM/Matroska', mime: 'video/webm', kinds: ['audio', 'video'], test: (b) => b.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])) },
];

/** The format `head` (a file's first bytes) starts with, if it is one of the known media. */
export function sniffMedia(head: Buffer): MediaSignature | undefined {
  const found = SIGNATURES.find((entry) => entry.test(head));
  return found === undefined ? undefined : { name: found.name, mime: found.mime, kinds: found.kinds };
}

/** The image type by its first bytes, never by its name. */
export function sniffImageType(bytes: Buffer): ImageMime | undefined {
  const found = sniffMedia(bytes);
  return found?.kinds.includes('image') ? (found.mime as ImageMime) : undefined;
}

/**
 * What bytes that are not media look like, for a message: servers and gateways answer errors
 * with pages and documents, sometimes under a 200. Undefined: binary of no known kind.
 */
export function describeNonMedia(head: Buffer): string | undefined {
  if (head.length === 0) return 'an empty file';
  const text = head.toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart().toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html')) return 'an HTML page';
  if (text.startsWith('<')) return 'an XML or HTML document';
  if (text.startsWith('{') || text.startsWith('[')) return 'a JSON document';
  // Printable text (tabs and line breaks allowed) is an error message, not a recording.
  if (/^[\x09\x0a\x0d\x20-\x7e]*$/.test(head.toString('latin1'))) return 'plain text';
  return undefined;
}

/** What an audio or video container states: its length, and a video's frame size. */
export interface MediaFacts {
  durationSec?: number | undefined;
  width?: number | undefined;
  height?: number | undefined;
  hasVideo?: boolean | undefined;
}

/**
 * The facts of audio or video (its bytes, or the path of a file, read as it streams); none it
 * cannot tell (it never throws). ISO base media (MP4, MOV, M4A) is read by mp4box: music-metadata
 * reads neither its video track's size nor the length of a movie without sound.
 */
export async function mediaFacts(source: Uint8Array | string): Promise<MediaFacts> {
  try {
    const head = typeof source === 'string' ? await fileHead(source) : Buffer.from(source.subarray(0, SNIFF_BYTES));
    return sniffMedia(head)?.name === ISO_MEDIA ? await isoFacts(source) : await otherFacts(source);
  } catch {
    return {};
  }
}

const ISO_MEDIA = 'MP4/MOV/M4A';

async function otherFacts(source: Uint8Array | string): Promise<MediaFacts> {
  // Loaded only when audio or video is read: most runs never need it.
  const { parseBuffer, parseFile } = await import('music-metadata');
  const options = { duration: true, skipCovers: true };
  const read = typeof source === 'string' ? parseFile(source, options) : parseBuffer(source, undefined, options);
  const { format } = await read;
  const video = format.trackInfo.find((track) => track.video !== undefined)?.video;
  const { duration: durationSec, hasVideo } = format;
  return { durationSec, width: video?.pixelWidth, height: video?.pixelHeight, hasVideo };
}

/** A file is read this much at a time, from where mp4box asks next (it skips the media data). */
const ISO_CHUNK_BYTES = 1024 * 1024;

async function isoFacts(source: Uint8Array | string): Promise<MediaFacts> {
  const { createFile, MP4BoxBuffer } = await import('mp4box');
  const file = createFile();
  let movie: Movie | undefined;
  file.onReady = (info) => (movie = info);
  file.onError = () => undefined;
  const append = (bytes: Uint8Array, at: number, last: boolean): number => {
    const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    return file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, at), last);
  };
  if (typeof source !== 'string') append(source, 0, true);
  else await readUntil(source, () => movie !== undefined, append);
  if (movie === undefined) return {};
  const video = movie.videoTracks[0]?.video;
  const durationSec = movie.timescale > 0 && movie.duration > 0 ? movie.duration / movie.timescale : undefined;
  return { durationSec, width: video?.width, height: video?.height, hasVideo: video !== undefined };
}

/** Feeds a file to `append` (which answers where to read next) until `done` or its end. */
function readUntil(path: string, done: () => boolean, append: (b: Uint8Array, at: number, last: boolean) => number) {
  return withFile(path, async (handle) => {
    const { size } = await handle.stat();
    for (let at = 0; at < size && !done(); ) {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(ISO_CHUNK_BYTES), 0, ISO_CHUNK_BYTES, at);
      if (bytesRead === 0) break;
      const next = append(buffer.subarray(0, bytesRead), at, at + bytesRead >= size);
      at = Math.max(next, at + bytesRead);
    }
  });
}

/** A file's first bytes, enough for every signature (`sniffMedia`). */
export const fileHead = (path: string): Promise<Buffer> =>
  withFile(path, async (handle) => {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  });

async function withFile<T>(path: string, use: (handle: FileHandle) => Promise<T>): Promise<T> {
  const handle = await open(path);
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}
