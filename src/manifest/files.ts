import { createHash } from 'node:crypto';
import { readFile, stat, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import type { ImageRef } from '../jobs/index.js';
import { IMAGE_SIDE_PX, imageSides, sidesAllowed } from '../image-sides.js';
import { sniffImageType } from '../media-type.js';

// A text larger than this, in a file or inline, is almost certainly a mistake (and costs real money).
export const MAX_TEXT_BYTES = 1024 * 1024;
/** The service's limit per image (docs/service.md). */
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export type FileCheck<T> = { ok: true; value: T } | { ok: false; expected: string; detail: string; hint?: string };

type ImageInfo = Omit<ImageRef, 'written'> & { stamp: string };
type TextInfo = { text: string; path: string; stamp: string };

/** Files remembered per cache: enough for every picture a batch shares, never every file of a million rows. */
const CACHED_FILES = 1000;

/** Per-reading caches by absolute path, oldest out first: a picture used by many jobs is read and hashed once. */
export interface FileCache {
  scope: FileScope;
  texts: Map<string, Promise<FileCheck<TextInfo>>>;
  images: Map<string, Promise<FileCheck<ImageInfo>>>;
}

export function newFileCache(scope: FileScope): FileCache {
  return { scope, texts: new Map(), images: new Map() };
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

// The real path is what is read (and, for an image, sent later): a link checked here cannot be
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

async function checkImageUncached(path: string): Promise<FileCheck<ImageInfo>> {
  const file = await regularFile(path);
  if (!file.ok) return file;
  if (file.value.size > MAX_IMAGE_BYTES) {
    return { ok: false, expected: 'an image of at most 10 MB', detail: sizeText(file.value.size, MAX_IMAGE_BYTES), hint: 'scale it down or recompress it' };
  }
  const bytes = await readFile(path);
  const contentType = sniffImageType(bytes);
  if (contentType === undefined) {
    const detail = bytes.length === 0 ? 'an empty file' : 'not an image by its bytes';
    return { ok: false, expected: 'a JPG, PNG, GIF, BMP or WebP image', detail };
  }
  const sides = sidesOf(bytes);
  if (!sides.ok) return sides;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const value = { path, contentType, bytes: bytes.length, sha256, ...sides.value, stamp: file.value.stamp };
  return { ok: true, value };
}

/** Its width and height, each within what the service takes: it refuses the image otherwise. */
function sidesOf(bytes: Buffer): FileCheck<{ width: number; height: number }> {
  const expected = `an image of ${IMAGE_SIDE_PX.min} to ${IMAGE_SIDE_PX.max} pixels a side`;
  const sides = imageSides(bytes);
  if (sides === undefined) return { ok: false, expected, detail: 'no readable width and height' };
  if (sidesAllowed(sides)) return { ok: true, value: sides };
  return { ok: false, expected, detail: `${sides.width}×${sides.height} pixels`, hint: 'resize it' };
}

/** Inside the scope, exists, is a regular file, is ≤ 10 MB and really an allowed image type; with its sha256. */
export function checkImage(cache: FileCache, path: string): Promise<FileCheck<ImageInfo>> {
  return cached(cache.images, path, () => confined(cache.scope, path, checkImageUncached));
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
