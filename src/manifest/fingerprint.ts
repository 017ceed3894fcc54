import { createHash } from 'node:crypto';
import type { Model } from '../api/types.js';
import { canonicalJson } from './content-hash.js';
import type { Manifest, ManifestUnit } from './types.js';

/**
 * What a unit's jobs are made of, short of reading its rows: what the manifest writes for it
 * (its jobs or its source entry, the defaults, where it sits), where its files are looked up, and
 * the catalogue its jobs are checked (and split) against. Equal fingerprints, and the files its
 * rows named unchanged (their stamps, which the ledger keeps), mean reading it again would give
 * the same jobs: the ledger keeps them as they are.
 */
export async function unitFingerprint(manifest: Manifest, unit: ManifestUnit, models: readonly Model[] | undefined): Promise<string> {
  const root = manifest.reading.source.root as { jobs?: unknown; defaults?: unknown } | null;
  const { scope } = manifest.reading;
  const hash = createHash('sha256');
  hash.update(canonicalJson({ unit: unit.key, position: unit.position, defaults: root?.defaults ?? null }));
  hash.update(canonicalJson({ folder: scope.folder, allowOutside: scope.allowOutside }));
  hash.update(models === undefined ? 'offline' : canonicalJson(models));
  if (unit.kind === 'jobs') hash.update(canonicalJson(root?.jobs ?? null));
  return hash.digest('hex');
}
