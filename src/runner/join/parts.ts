import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm, type FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';

/**
 * What joining a job's parts came to: the joined file written, or why the parts cannot be joined
 * exactly (then only the playlist is written). I/O failures are thrown, not returned.
 */
export type JoinOutcome = { joined: true; bytes: number } | { joined: false; reason: string };

/** `part 2 (ch-01.p002.wav)`: how a message names a part. */
export function partName(index: number, path: string): string {
  return `part ${index + 1} (${path.split(/[\\/]/).pop() ?? path})`;
}

/** Every part read in order, or why one cannot be joined (`read`'s reason follows the part's name). */
export async function readParts<P>(
  partPaths: readonly string[],
  reader: { read(path: string): Promise<P | string>; same(first: P, part: P): boolean; describe(part: P): string },
): Promise<P[] | string> {
  if (partPaths.length === 0) throw new RangeError('a join needs at least one part');
  const parts: P[] = [];
  for (const [index, path] of partPaths.entries()) {
    const part = await reader.read(path);
    if (typeof part === 'string') return `${partName(index, path)} ${part}`;
    const first = parts[0];
    if (first !== undefined && !reader.same(first, part)) {
      const firstName = partName(0, partPaths[0] ?? '');
      return `${partName(index, path)} is ${reader.describe(part)}, ${firstName} is ${reader.describe(first)}`;
    }
    parts.push(part);
  }
  return parts;
}

/**
 * Writes `outPath` (replacing it) with `write`, then `tail`; a problem `write` returns refuses the
 * join. A half-written output is removed either way, so no partial join is left to look finished.
 */
export async function writeJoined(
  outPath: string,
  write: (out: WriteStream) => Promise<string | undefined>,
  tail?: Buffer,
): Promise<JoinOutcome> {
  const out = createWriteStream(outPath);
  try {
    const problem = await write(out);
    if (problem !== undefined) {
      await discard(out, outPath);
      return { joined: false, reason: problem };
    }
    out.end(tail);
    await finished(out);
  } catch (error) {
    await discard(out, outPath);
    throw error;
  }
  return { joined: true, bytes: out.bytesWritten };
}

async function discard(out: WriteStream, path: string): Promise<void> {
  if (!out.closed) {
    const closed = once(out, 'close').catch(() => undefined);
    out.destroy();
    await closed;
  }
  await rm(path, { force: true });
}

export async function writeChunk(out: WriteStream, bytes: Buffer): Promise<void> {
  if (bytes.length > 0 && !out.write(bytes)) await once(out, 'drain');
}

/** Up to `length` bytes of a part from `position`: fewer at the end of the file. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
