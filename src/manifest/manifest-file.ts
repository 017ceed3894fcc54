import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { MediabatchError, UsageError } from '../errors.js';
import { ManifestError } from './errors.js';
import { MAX_TEXT_BYTES, sizeText } from './files.js';

// Parsing holds the whole YAML tree, many times the text's size: unbounded, a file of millions of
// tiny values fills the heap while yaml builds it. A manifest this large would be split anyway.
const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

// yaml holds a scalar many times over while it unfolds it, so a text far past what a job may send
// (1 MB, written with escapes up to twice as long) is refused before parsing: by its line, or for a
// block scalar (`text: |`) by the lines it spans.
const MAX_LINE_BYTES = 2 * MAX_TEXT_BYTES;

// A line that ends by opening a block scalar: `key: |`, `- >-`, `text: |2 # comment`.
const BLOCK_HEADER = /(?:^|[:-])[ \t]+[|>][-+1-9]{0,2}[ \t]*(?:#.*)?$/;

/** `length`: in bytes; for a `block` (a scalar spanning lines from `line` on), as far as it was read. */
interface LongText {
  line: number;
  length: number;
  block: boolean;
}

/** The first line, or block scalar, longer than MAX_LINE_BYTES. */
function longText(bytes: Buffer): LongText | undefined {
  let block: { line: number; indent: number; length: number } | undefined;
  let line = 1;
  for (let start = 0; start < bytes.length; line += 1) {
    const end = bytes.indexOf(10, start);
    const stop = end === -1 ? bytes.length : end;
    const length = stop - start;
    if (length > MAX_LINE_BYTES) return { line, length, block: false };
    const indent = indentOf(bytes, start, stop);
    if (block !== undefined && (indent === length || indent > block.indent)) {
      block.length += length + 1;
      if (block.length > MAX_LINE_BYTES) return { line: block.line, length: block.length, block: true };
    } else {
      block = length < 4096 && BLOCK_HEADER.test(bytes.toString('utf8', start, stop)) ? { line, indent, length: 0 } : undefined;
    }
    start = stop + 1;
  }
  return undefined;
}

function indentOf(bytes: Buffer, start: number, stop: number): number {
  let at = start;
  while (at < stop && bytes[at] === 32) at += 1;
  return at - start;
}

function unreadable(path: string, code: string | undefined, cause: unknown): UsageError {
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : String(code ?? cause);
  return new UsageError(`cannot read the manifest ${path}: ${why}`, cause);
}

const CAP_TEXT = `${MAX_MANIFEST_BYTES / (1024 * 1024)} MB`;

function tooLarge(path: string, got: string): ManifestError {
  const message = `expected a manifest of at most ${CAP_TEXT}, got ${got}`;
  return new ManifestError([{ file: path, line: 1, col: 1, message, hint: 'split it into several manifests' }]);
}

/** The manifest's text. Throws UsageError when it cannot be read, ManifestError when too large or not UTF-8. */
export async function readManifestText(path: string, absolute: string): Promise<string> {
  let bytes: Buffer;
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) throw unreadable(path, 'EISDIR', undefined);
    if (info.size > MAX_MANIFEST_BYTES) throw tooLarge(path, sizeText(info.size, MAX_MANIFEST_BYTES));
    // At most one byte past the cap, whatever the file is: a pipe or a device has no size to check first.
    bytes = await buffer(createReadStream(absolute, { end: MAX_MANIFEST_BYTES }));
  } catch (error) {
    if (error instanceof MediabatchError) throw error;
    throw unreadable(path, (error as NodeJS.ErrnoException).code, error);
  }
  if (bytes.length > MAX_MANIFEST_BYTES) throw tooLarge(path, `more than ${CAP_TEXT}`);
  const long = longText(bytes);
  if (long !== undefined) {
    const cap = `${MAX_LINE_BYTES / (1024 * 1024)} MB`;
    // A block is measured only until it passes the cap: its whole size is not known.
    const message = long.block ? `expected texts of at most ${cap}, got a block text longer than that` : `expected lines of at most ${cap}, got one of ${sizeText(long.length, MAX_LINE_BYTES)}`;
    const hint = "a job's text is at most 1 MB; split a longer one into several jobs";
    throw new ManifestError([{ file: path, line: long.line, col: 1, message, hint }]);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    const issue = { file: path, line: 1, col: 1, message: 'expected a UTF-8 text file, got bytes that are not UTF-8', hint: 'save the file as UTF-8' };
    throw new ManifestError([issue], error);
  }
}
