import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { expectedGot, formatGot } from '../errors.js';
import { checkRegularFile } from '../files.js';
import { manifestAt, type ProblemBody, problemAt } from './rows.js';
import type { SourceContext, SourceItem, TableEntry } from './types.js';

// A job's text is at most 1 MB: a CSV row or JSON line this long is not one job (a quote left
// open, the wrong file), and must not be held whole.
export const MAX_RECORD_CHARS = 4 * 1024 * 1024;

/** The end of the last whole character: a multi-byte character cut by the chunk's end waits for the next chunk. */
function wholeCharsEnd(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 4); i--) {
    const byte = bytes[i] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + length > bytes.length ? i : bytes.length;
  }
  return bytes.length;
}

/**
 * Bytes passed on unchanged, with a note of whether they were all UTF-8. The parsers decode as
 * they go and would quietly turn a bad byte into U+FFFD, which would then be sent and paid for;
 * a check of each chunk costs next to nothing, and only once it fails need a reader look for
 * U+FFFD in what it read, to say where the bad bytes are.
 */
class Utf8Watch extends Transform {
  invalid = false;
  #pending: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.invalid) {
      const bytes = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
      const end = wholeCharsEnd(bytes);
      this.invalid = !isUtf8(bytes.subarray(0, end));
      this.#pending = bytes.subarray(end);
    }
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.#pending.length > 0) this.invalid = true;
    done();
  }
}

export const REPLACEMENT_CHAR = '\uFFFD';

/** As a text file that is not UTF-8 is refused. */
export const NOT_UTF8: ProblemBody = { ...expectedGot('UTF-8 text', 'not valid UTF-8'), hint: 'save the file as UTF-8' };

/**
 * What a table source reads: `context.input` (stdin), else its file, checked as every file a
 * manifest names is; through a Utf8Watch. Or the problem, located at the entry's key (`csv: a.csv`).
 */
type Opened = { source: Readable; input: Utf8Watch } | { problem: SourceItem };

export async function openTable(entry: TableEntry, context: SourceContext): Promise<Opened> {
  let source = context.input;
  if (source === undefined) {
    const check = await checkRegularFile(context.scope, resolve(context.manifestDir, entry.file));
    if (!check.ok) {
      const got = `${formatGot(entry.file)} (${check.detail})`;
      const body = { field: entry.kind, ...expectedGot(check.expected, got), hint: check.hint };
      return { problem: problemAt(manifestAt(context, [entry.kind]), body) };
    }
    source = createReadStream(check.value);
  }
  const input = new Utf8Watch();
  // pipeline: an error or an early stop on either side tears both down.
  pipeline(source, input, () => undefined);
  return { source, input };
}
