import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { MediabatchError, UsageError } from '../errors.js';
import { ManifestError } from './errors.js';
import { MAX_TEXT_BYTES, sizeText } from './files.js';

/**
 * The largest manifest read. Parsing holds the whole YAML tree, so it costs memory in proportion
 * to the text: `validate` of a 10.8 MB, 100,000-job manifest peaks near 780 MB, of a 31.7 MB,
 * 290,000-job one near 2.7 GB, and of one 30 MB double-quoted text near 950 MB. Past this a
 * manifest would be split anyway (each part with its own ledger). Not bounded: a file of millions
 * of tiny values (`[1,1,1,…]` to 32 MB) fills a 4 GB heap while yaml builds its tree.
 */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

/**
 * The longest line read. yaml holds a quoted scalar many times over while it unfolds it (a 20 MB
 * one peaks near 900 MB), so a text far past what a job may send (1 MB, written with escapes up
 * to twice as long) is refused by its line before parsing.
 */
export const MAX_LINE_BYTES = 2 * MAX_TEXT_BYTES;

/** The first line longer than MAX_LINE_BYTES: its number and length. */
function longLine(bytes: Buffer): { line: number; length: number } | undefined {
  let line = 1;
  for (let start = 0; start < bytes.length; line += 1) {
    const end = bytes.indexOf(10, start);
    const stop = end === -1 ? bytes.length : end;
    if (stop - start > MAX_LINE_BYTES) return { line, length: stop - start };
    start = stop + 1;
  }
  return undefined;
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

// At most one byte past the cap, whatever the file is: a pipe or a device has no size to check first.
function readCapped(absolute: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    createReadStream(absolute, { end: MAX_MANIFEST_BYTES })
      .on('data', (chunk) => chunks.push(chunk as Buffer))
      .on('error', reject)
      .on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * The manifest's text. A file over MAX_MANIFEST_BYTES is refused by its size before a byte is
 * read. Throws UsageError when the file cannot be read, ManifestError when it is too large or not UTF-8.
 */
export async function readManifestText(path: string, absolute: string): Promise<string> {
  let bytes: Buffer;
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) throw unreadable(path, 'EISDIR', undefined);
    if (info.size > MAX_MANIFEST_BYTES) throw tooLarge(path, sizeText(info.size, MAX_MANIFEST_BYTES));
    bytes = await readCapped(absolute);
  } catch (error) {
    if (error instanceof MediabatchError) throw error;
    throw unreadable(path, (error as NodeJS.ErrnoException).code, error);
  }
  if (bytes.length > MAX_MANIFEST_BYTES) throw tooLarge(path, `more than ${CAP_TEXT}`);
  const long = longLine(bytes);
  if (long !== undefined) {
    const message = `expected lines of at most ${MAX_LINE_BYTES / (1024 * 1024)} MB, got one of ${sizeText(long.length, MAX_LINE_BYTES)}`;
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
