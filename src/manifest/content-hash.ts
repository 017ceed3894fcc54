import { createHash, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Model } from '../api/types.js';
import type { JobType } from '../jobs/index.js';
import { fileHash } from './files.js';
import type { Manifest, ManifestUnit } from './open.js';
import { matchingFiles } from './sources/files.js';

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
  /**
   * sha256 of each media file's bytes by field, never its path: renaming a picture keeps the id. Still
   * named `images`, as when images were all a job sent: the hash's input never changes shape.
   */
  images?: Record<string, string> | undefined;
  /** The ids of the jobs whose results it takes, by field: only when it takes some, so every other hash stays. */
  inputs?: Readonly<Record<string, string>> | undefined;
}

export function contentHash(content: HashedContent): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

/** sha256 of each media file's bytes by field, or undefined when the job has none. */
export function imageHashes(media: Readonly<Record<string, { sha256: string }>>): Record<string, string> | undefined {
  const entries = Object.entries(media).map(([field, ref]) => [field, ref.sha256] as const);
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

const SURROGATE_PAIRS = /[\ud800-\udbff][\udc00-\udfff]/g;

/** Characters as the service counts them: Unicode code points, not UTF-16 units. */
export function countChars(text: string): number {
  return text.length - (text.match(SURROGATE_PAIRS)?.length ?? 0);
}

/**
 * What a unit's jobs are made of, short of reading its rows: what the manifest writes for it,
 * where its files are looked up, the catalogue, and for a source the bytes of its file or the
 * files its pattern matches. Equal fingerprints, and the files its rows named unchanged, mean
 * reading it again would give the same jobs. Hashing bytes costs a fraction of parsing them.
 */
export async function unitFingerprint(manifest: Manifest, unit: ManifestUnit, models: readonly Model[] | undefined): Promise<string> {
  const root = manifest.reading.source.root as { jobs?: unknown; defaults?: unknown; sources?: unknown[] } | null;
  const { scope } = manifest.reading;
  const hash = createHash('sha256');
  hash.update(canonicalJson({ unit: unit.key, position: unit.position, defaults: root?.defaults ?? null }));
  hash.update(canonicalJson({ folder: scope.folder, allowOutside: scope.allowOutside }));
  hash.update(models === undefined ? 'offline' : canonicalJson(models));
  if (unit.source === undefined) {
    hash.update(canonicalJson(root?.jobs ?? null));
    return hash.digest('hex');
  }
  const { entry, index } = unit.source;
  hash.update(canonicalJson(root?.sources?.[index] ?? null));
  if (entry.kind === 'files') hash.update(canonicalJson(await matchingFiles(entry, { manifestDir: scope.folder })));
  if (entry.kind === 'csv' || entry.kind === 'tsv' || entry.kind === 'jsonl') {
    // A stream (stdin) can be read only once: a unit reading one is never kept as it was.
    if (manifest.reading.input !== undefined) hash.update(randomUUID());
    else hash.update(await fileHash(resolve(scope.folder, entry.file)));
  }
  return hash.digest('hex');
}
