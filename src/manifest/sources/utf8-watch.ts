import { isUtf8 } from 'node:buffer';
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { expectedGot } from '../errors.js';
import type { ProblemBody } from './rows.js';

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
export class Utf8Watch extends Transform {
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

/** `input` through a Utf8Watch; an error or early stop on either side tears both down. */
export function watchedUtf8(input: Readable): Utf8Watch {
  const watch = new Utf8Watch();
  pipeline(input, watch, () => undefined);
  return watch;
}

/** What a decoder makes of bytes that are not UTF-8. */
export const REPLACEMENT_CHAR = '\uFFFD';

/** As a text file that is not UTF-8 is refused. */
export const NOT_UTF8: ProblemBody = { ...expectedGot('UTF-8 text', 'not valid UTF-8'), hint: 'save the file as UTF-8' };
