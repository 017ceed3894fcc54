import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { factOf, type MediaFact, type MediaField, type MediaRef } from '../jobs/index.js';
import { fileHead, mediaFacts, sniffMedia } from '../media-type.js';
import type { FileMedia, MediaFacts, MediaSignature } from '../media-type.js';
import { IMAGE_SIDE_PX, imageSides, sidesAllowed } from '../image-sides.js';

// A text larger than this, in a file or inline, is almost certainly a mistake (and costs real money).
export const MAX_TEXT_BYTES = 1024 * 1024;

export type FileCheck<T> = { ok: true; value: T } | { ok: false; expected: string; detail: string; hint?: string };

type MediaInfo = Omit<MediaRef, 'written'> & { stamp: string };
type TextInfo = { text: string; path: string; stamp: string };

/** Files remembered per cache: enough for every picture a batch shares, never every file of a million rows. */
const CACHED_FILES = 1000;

/** Per-reading caches by absolute path, oldest out first: a picture used by many jobs is read and hashed once. */
export interface FileCache {
  scope: FileScope;
  texts: Map<string, Promise<FileCheck<TextInfo>>>;
  media: Map<string, Promise<FileCheck<MediaReading>>>;
}

export function newFileCache(scope: FileScope): FileCache {
  return { scope, texts: new Map(), media: new Map() };
}

function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= CACHED_FILES) cache.delete(cache.keys().next().value as string);
    value = make();
    cache.set(key, value);
  }
  return value;
}

/** What a file was when it was read: a later reading compares it to tell whether the file changed. */
export function stampOf(info: { size: number; mtimeMs: number }): string {
  return `${info.size}:${info.mtimeMs}`;
}

// The real path is what is read (and, for media, sent later): a link checked here cannot be
// pointed elsewhere between this check and the read.
async function confined<T>(scope: FileScope, path: string, check: (realPath: string) => Promise<FileCheck<T>>): Promise<FileCheck<T>> {
  const where = await confine(scope, path);
  return where.ok ? check(where.value) : where;
}

/** A size as messages show it: MB to one decimal, exact bytes when rounding would hide the excess. */
export function sizeText(bytes: number, limitBytes: number): string {
  const rounded = `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return Number.parseFloat(rounded) * 1024 * 1024 <= limitBytes ? `${bytes} bytes` : rounded;
}

async function regularFile(path: string): Promise<FileCheck<{ size: number; stamp: string }>> {
  try {
    const info = await stat(path);
    if (info.isFile()) return { ok: true, value: { size: info.size, stamp: stampOf(info) } };
    return { ok: false, expected: 'a regular file', detail: info.isDirectory() ? 'a directory' : 'not a regular file' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return { ok: false, expected: 'an existing file', detail: 'no such file', hint: "paths are relative to the manifest's folder" };
    }
    return { ok: false, expected: 'a readable file', detail: `cannot read it: ${code ?? String(error)}` };
  }
}

/** `path` inside the scope and a regular file: its real path, or why it cannot be read. */
export function checkRegularFile(scope: FileScope, path: string): Promise<FileCheck<string>> {
  return confined(scope, path, async (real) => {
    const file = await regularFile(real);
    return file.ok ? { ok: true, value: real } : file;
  });
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

async function readTextUncached(path: string): Promise<FileCheck<TextInfo>> {
  const file = await regularFile(path);
  if (!file.ok) return file;
  if (file.value.size > MAX_TEXT_BYTES) {
    return { ok: false, expected: 'a text file of at most 1 MB', detail: sizeText(file.value.size, MAX_TEXT_BYTES), hint: 'split it into several jobs' };
  }
  const bytes = await readFile(path);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, expected: 'UTF-8 text', detail: 'not valid UTF-8', hint: 'save the file as UTF-8' };
  }
  if (!/\S/.test(text)) return { ok: false, expected: 'non-empty text', detail: 'an empty file' };
  // Fatal decoding leaves no unpaired surrogate, but a NUL byte is valid UTF-8 and no text to speak.
  const nul = text.indexOf('\u0000');
  if (nul !== -1) return { ok: false, expected: 'text without NUL characters', detail: `a NUL byte on line ${lineOf(text, nul)}`, hint: 'is this a text file?' };
  return { ok: true, value: { text, path, stamp: file.value.stamp } };
}

/** The text of a UTF-8 file inside the scope (a leading BOM dropped), or why it cannot be spoken. */
export function readTextFile(cache: FileCache, path: string): Promise<FileCheck<TextInfo>> {
  return cached(cache.texts, path, () => confined(cache.scope, path, readTextUncached));
}

/** What one media file's bytes showed, whatever field names it (a file several jobs share is read once). */
interface MediaReading extends MediaFacts {
  path: string;
  bytes: number;
  sha256: string;
  stamp: string;
  head: Buffer;
}

/** An image's width and height, each within what the service takes: it refuses the image otherwise. */
function sidesProblem({ width, height }: MediaFacts): FileCheck<MediaInfo> | undefined {
  const expected = `an image of ${IMAGE_SIDE_PX.min} to ${IMAGE_SIDE_PX.max} pixels a side`;
  if (width === undefined || height === undefined) {
    return { ok: false, expected, detail: 'no readable width and height' };
  }
  if (sidesAllowed({ width, height })) return undefined;
  return { ok: false, expected, detail: `${width}×${height} pixels`, hint: 'resize it' };
}

/** sha256 of a file's bytes; a file that cannot be read hashes as that (reading it reports why). */
export function fileHash(path: string): Promise<string> {
  return new Promise((done) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', (error) => done(`unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`))
      .on('end', () => done(hash.digest('hex')));
  });
}

// Streamed, never held whole: a batch of rows may name many large videos at once.
async function readMediaUncached(path: string): Promise<FileCheck<MediaReading>> {
  const file = await regularFile(path);
  if (!file.ok) return file;
  // A file that cannot be read has no head; hashing it then says why.
  const head = await fileHead(path).catch(() => Buffer.alloc(0));
  const kinds = sniffMedia(head)?.kinds ?? [];
  // An image's sides may follow a long header (a JPEG's): it is read whole, once, and hashed from memory.
  const image = kinds.includes('image') ? await readFile(path).catch(() => undefined) : undefined;
  const sha256 = image === undefined ? await fileHash(path) : createHash('sha256').update(image).digest('hex');
  if (sha256.startsWith('unreadable:')) {
    return { ok: false, expected: 'a readable file', detail: `cannot read it: ${sha256.slice('unreadable:'.length)}` };
  }
  const reading = { path, bytes: file.value.size, sha256, stamp: file.value.stamp, head };
  if (image !== undefined) return { ok: true, value: { ...reading, ...imageSides(image) } };
  if (!kinds.includes('audio') && !kinds.includes('video')) return { ok: true, value: reading };
  return { ok: true, value: { ...reading, ...(await mediaFacts(path)) } };
}

const NOUN: Readonly<Record<FileMedia, string>> = { image: 'an image', audio: 'an audio file', video: 'a video' };
const FACT_TEXT: Readonly<Record<MediaFact, string>> = {
  durationSec: 'duration', wholeSec: 'duration', width: 'width', height: 'height',
};

/**
 * Inside the scope, exists, is a regular file, is one of the media the field takes by its bytes
 * (never its name), within that medium's size and the field's duration, and states the facts its
 * kind prices by; with its sha256 and those facts.
 */
export async function checkMedia(cache: FileCache, path: string, field: MediaField): Promise<FileCheck<MediaInfo>> {
  const limits = Object.entries(field.maxBytes) as [FileMedia, number][];
  const kinds = limits.map(([kind]) => kind);
  const noun = words(kinds.map((kind) => NOUN[kind]), 'or');
  const tooBig = (bytes: number, [kind, max]: [FileMedia, number]): FileCheck<MediaInfo> => {
    const expected = `${NOUN[kind]} of at most ${max / (1024 * 1024)} MB`;
    const hint = kind === 'image' ? 'scale it down or recompress it' : 'shorten it or recompress it';
    return { ok: false, expected, detail: sizeText(bytes, max), hint };
  };
  // The size first, before a large file is read; a field taking audio or video allows the larger at first.
  const largest = limits.reduce((most, limit) => (limit[1] > most[1] ? limit : most));
  const size = await confined(cache.scope, path, regularFile);
  if (!size.ok) return size;
  if (size.value.size > largest[1]) return tooBig(size.value.size, largest);
  const read = await cached(cache.media, path, () => confined(cache.scope, path, readMediaUncached));
  if (!read.ok) return read;
  const { head, hasVideo, ...reading } = read.value;
  const found = sniffMedia(head);
  const fits = kinds.filter((kind) => found?.kinds.includes(kind));
  const used = fits.length > 1 ? (hasVideo ? 'video' : 'audio') : fits[0];
  if (found === undefined || used === undefined) return wrongMedium(reading.bytes, kinds, found);
  if (field.formats !== undefined && !field.formats.includes(found.name)) {
    return { ok: false, expected: `${noun} in ${words(field.formats, 'or')}`, detail: `its bytes are ${found.name}` };
  }
  const limit = limits.find(([kind]) => kind === used);
  if (limit !== undefined && reading.bytes > limit[1]) return tooBig(reading.bytes, limit);
  const sides = used === 'image' ? sidesProblem(reading) : undefined;
  if (sides !== undefined) return sides;
  const missing = Object.values(field.facts ?? {}).filter((fact) => factOf(reading, fact) === undefined);
  if (missing.length > 0) {
    const facts = words([...new Set(missing)].map((fact) => FACT_TEXT[fact]), 'and');
    const expected = `${noun} whose container states its ${facts}`;
    return { ok: false, expected, detail: `${found.name}, its ${facts} not found` };
  }
  const bounds = durationProblem(reading.durationSec, field.durationSec);
  if (bounds !== undefined) {
    return { ok: false, expected: `${noun} ${bounds}`, detail: `${reading.durationSec?.toFixed(1)} seconds long` };
  }
  // A container that holds either medium is declared as what it is used as (an M4A as audio/mp4).
  const contentType = used === 'image' ? found.mime : found.mime.replace(/^(audio|video)\//, `${used}/`);
  return { ok: true, value: { ...reading, contentType } };
}

/** What a file that is none of the media a field takes was; an image field keeps the words it always had. */
function wrongMedium(bytes: number, kinds: readonly FileMedia[], found?: MediaSignature): FileCheck<MediaInfo> {
  const imageOnly = kinds.length === 1 && kinds[0] === 'image';
  const expected = imageOnly ? 'a JPG, PNG, GIF, BMP or WebP image' : words(kinds.map((kind) => NOUN[kind]), 'or');
  if (bytes === 0) return { ok: false, expected, detail: 'an empty file' };
  const detail = found === undefined
    ? `not ${imageOnly ? NOUN.image : expected} by its bytes`
    : `its bytes are ${found.name}, ${words(found.kinds.map((kind) => NOUN[kind]), 'or')}`;
  return { ok: false, expected, detail };
}

/** `a`, `a and b`, `a, b and c`. */
function words(items: readonly string[], last: 'and' | 'or'): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1)}`;
}

function durationProblem(durationSec: number | undefined, bounds: MediaField['durationSec']): string | undefined {
  if (bounds === undefined) return undefined;
  const { min = 0, max = Infinity } = bounds;
  if (durationSec === undefined) return `whose container states its duration`;
  if (durationSec >= min && durationSec <= max) return undefined;
  return max === Infinity ? `of at least ${min} seconds` : `of ${min} to ${max} seconds`;
}

/**
 * Where the files a manifest names may be. A manifest may come from someone else: it must not be
 * able to send a local file (`../../.ssh/id_rsa`, `/etc/passwd`, or a link to either) to the
 * service, so by default every file must be inside the manifest's folder once symlinks are resolved.
 */
export interface FileScope {
  /** The manifest's folder, as written and with its symlinks resolved. */
  folder: string;
  realFolder: string;
  /** `--allow-outside-files`: the user vouches for the manifest. */
  allowOutside: boolean;
}

export async function fileScope(folder: string, allowOutside: boolean): Promise<FileScope> {
  // The manifest was just read from this folder: it exists; if it vanished since, nothing in it will be read anyway.
  const realFolder = await realpath(folder).catch(() => folder);
  return { folder, realFolder, allowOutside };
}

function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The path to read for `path` (absolute): its real path, or why it may not be read. A path that
 * does not resolve (no such file) is judged as written and left to the checks that report it.
 */
export async function confine(scope: FileScope, path: string): Promise<FileCheck<string>> {
  const real = await realpath(path).catch(() => undefined);
  if (scope.allowOutside) return { ok: true, value: real ?? path };
  if (real === undefined ? isInside(scope.folder, path) : isInside(scope.realFolder, real)) return { ok: true, value: real ?? path };
  return {
    ok: false,
    expected: "a file inside the manifest's folder",
    detail: `resolves to ${real ?? path}`,
    hint: 'copy the file into that folder, or pass --allow-outside-files if you trust this manifest',
  };
}
