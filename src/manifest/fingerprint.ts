import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Model } from '../api/types.js';
import { canonicalJson } from './content-hash.js';
import { matchingFiles } from './sources/files.js';
import type { Manifest, ManifestUnit } from './types.js';

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

/** sha256 of a file's bytes; a file that cannot be read hashes as that (reading it reports why). */
function fileHash(path: string): Promise<string> {
  return new Promise((done) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', (error) => done(`unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`))
      .on('end', () => done(hash.digest('hex')));
  });
}
