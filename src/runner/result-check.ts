import { open } from 'node:fs/promises';
import { describeNonMedia, sniffMedia, SNIFF_BYTES, type MediaKind } from '../media-type.js';

/**
 * Why the downloaded bytes are not a result of this job's kind, or undefined when they are. The
 * bytes decide; Content-Type only vouches for a binary format this table does not know. A
 * storage error page served with 200 must never be saved, and recorded, as a paid result.
 */
export function resultMismatch(expected: MediaKind, head: Buffer, contentType: string | undefined): string | undefined {
  const media = sniffMedia(head);
  if (media?.kinds.includes(expected)) return undefined;
  const said = contentType === undefined ? '' : `, Content-Type ${contentType.split(';', 1)[0]?.trim()}`;
  if (media !== undefined) return `the result is not ${expected}: its bytes are ${media.name}${said}`;
  const looksLike = describeNonMedia(head);
  if (looksLike !== undefined) return `the result is not ${expected}: its bytes are ${looksLike}${said}`;
  if (contentType?.toLowerCase().trim().startsWith(`${expected}/`)) return undefined;
  return `the result is not ${expected}: its bytes match no known ${expected} format${said}`;
}

/** The first bytes of `file`, for `resultMismatch`. */
export async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
