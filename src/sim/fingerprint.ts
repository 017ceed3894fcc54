/**
 * The canonical content of an accepted job, hashed. Two submits with the same fingerprint asked
 * for the same thing; numbers are parsed first so JSON and multipart spellings agree. Each kind
 * lists its canonical fields, its type first.
 */
import { createHash } from 'node:crypto';

export function fingerprint(canonical: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}
