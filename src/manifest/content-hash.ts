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

/** sha256 of each image's bytes by field, or undefined when the job has none. */
export function imageHashes(images: Readonly<Record<string, { sha256: string }>>): Record<string, string> | undefined {
  const entries = Object.entries(images).map(([field, ref]) => [field, ref.sha256] as const);
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

const SURROGATE_PAIRS = /[\ud800-\udbff][\udc00-\udfff]/g;

/** Characters as the service counts them: Unicode code points, not UTF-16 units. */
export function countChars(text: string): number {
  return text.length - (text.match(SURROGATE_PAIRS)?.length ?? 0);
}
