import type { Model } from '../api/types.js';
import { duplicateIssue, idKey, originOf } from './ids.js';
import { IssueCollector } from './issues.js';
import { openManifest, type LoadOptions } from './open.js';
import { readUnit } from './read.js';
import type { Claimant } from './rows.js';
import type { LoadedManifest, ResolvedJob } from './types.js';

export type { LoadOptions };

/**
 * Reads a whole manifest into memory: every job resolved, ids unique (ignoring case), every
 * problem reported at once as a ManifestError (UsageError when the file cannot be read). For
 * small manifests and tests; a run streams its jobs into the ledger instead (runner/ingest.ts),
 * where the ledger holds the ids. `models`: check every job against the catalogue too.
 */
export async function loadManifest(path: string, options: LoadOptions & { models?: readonly Model[] } = {}): Promise<LoadedManifest> {
  const manifest = await openManifest(path, options);
  const issues = new IssueCollector();
  issues.addAll(manifest.issues);
  const jobs: ResolvedJob[] = [];
  const claimed = new Map<string, { id: string; origin: string }>();
  for (const unit of manifest.units) {
    for await (const batch of readUnit(manifest, unit, { models: options.models })) {
      issues.addAll(batch.issues);
      const claim = (job: Claimant): boolean => {
        const held = claimed.get(idKey(job.id));
        if (held !== undefined) issues.add(duplicateIssue(job, manifest.displayPath, held));
        else claimed.set(idKey(job.id), { id: job.id, origin: originOf(job, manifest.displayPath) });
        return held === undefined;
      };
      batch.claims.forEach(claim);
      for (const job of batch.jobs) if (claim(job)) jobs.push(job);
    }
  }
  const error = issues.error();
  if (error !== undefined) throw error;
  const { reading: _reading, issues: _issues, ...rest } = manifest;
  return { ...rest, jobs };
}
