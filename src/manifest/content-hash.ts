import type { JobType } from '../jobs/types.js';
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  let members = '';
  // sort() with no comparator orders by UTF-16 code units, as the hashes stored in ledgers were made.
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    members += `${members === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `{${members}}`;
}

export interface HashedContent {
  type: JobType;
  /** Every resolved parameter (defaults merged), prompts included. */
  params: Record<string, unknown>;
  /** The text itself, never the name of the file it came from. */
  text?: string | undefined;
  /** sha256 of each image's bytes by field, never its path: renaming a picture keeps the id. */
  images?: Record<string, string> | undefined;
}

/** sha256 hex over the canonical JSON of a job's resolved content. */
export function contentHash(content: HashedContent): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

/** `<type>-<first 16 hex of the content hash>`: stable under reordering, new on any content change. */
export function deriveId(type: JobType, hash: string): string {
  return `${type}-${hash.slice(0, 16)}`;
}

/** Characters as the service counts them: Unicode code points, not UTF-16 units. */
export function countChars(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
