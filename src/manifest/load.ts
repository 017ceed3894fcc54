import type { Model } from '../api/types.js';
import { IdSet } from './id-set.js';
import { type Claimant, duplicateIssue } from './ids.js';
import { IssueCollector } from './issues.js';
import { openManifest, type LoadOptions } from './open.js';
import { readUnit } from './read.js';
import type { LoadedManifest, Manifest, ResolvedJob } from './types.js';

/**
 * Reads a whole manifest into memory: every job resolved, ids unique (ignoring case), every
 * problem reported at once as a ManifestError (UsageError when the file cannot be read). For
 * small manifests and tests; a run streams its jobs into the ledger instead (runner/ingest.ts),
 * where the ledger holds the ids. `models`: check every job against the catalogue too.
 */
export async function loadManifest(path: string, options: LoadOptions & { models?: readonly Model[] } = {}): Promise<LoadedManifest> {
  const manifest = await openManifest(path, options);
  const jobs: ResolvedJob[] = [];
  await checkJobs(manifest, options.models, (job) => jobs.push(job));
  const { reading: _reading, issues: _issues, ...rest } = manifest;
  return { ...rest, jobs };
}

/**
 * Reads every job of an opened manifest a batch at a time, hands each on to `use`, and throws
 * every problem at the end as one ManifestError: the rows', and ids another job already holds
 * (ignoring case; a row with problems, or a split text, still holds its id). Keeps no job: only
 * the ids, compactly. `models`: check every job against the catalogue too.
 */
export async function checkJobs(manifest: Manifest, models: readonly Model[] | undefined, use: (job: ResolvedJob) => void): Promise<void> {
  const issues = new IssueCollector();
  issues.addAll(manifest.issues);
  const ids = new IdSet();
  const file = manifest.displayPath;
  const claim = (job: Claimant): boolean => {
    const held = ids.add(job.id, { file: job.position.file ?? file, line: job.position.line, col: job.position.col });
    if (held !== undefined) issues.add(duplicateIssue(job, file, held));
    return held === undefined;
  };
  for (const unit of manifest.units) {
    for await (const batch of readUnit(manifest, unit, { models })) {
      issues.addAll(batch.issues);
      batch.claims.forEach(claim);
      for (const job of batch.jobs) if (claim(job)) use(job);
    }
  }
  const error = issues.error();
  if (error !== undefined) throw error;
}
