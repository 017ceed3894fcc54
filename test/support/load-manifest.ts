import type { Model } from '../../src/api/types.js';
import type { ResolvedJob } from '../../src/jobs/index.js';
import { type LoadOptions, type Manifest, openManifest } from '../../src/manifest/open.js';
import { checkJobs } from '../../src/manifest/read.js';

/**
 * Reads a whole manifest into memory: every job resolved, ids unique (ignoring case), every
 * problem reported at once as a ManifestError (UsageError when the file cannot be read). For
 * small manifests and tests; a run streams its jobs into the ledger instead (runner/ingest.ts),
 * where the ledger holds the ids. `models`: check every job against the catalogue too.
 */
export async function loadManifest(
  path: string,
  options: LoadOptions & { models?: readonly Model[] } = {},
): Promise<Omit<Manifest, 'reading' | 'issues'> & { jobs: ResolvedJob[] }> {
  const manifest = await openManifest(path, options);
  const jobs: ResolvedJob[] = [];
  await checkJobs(manifest, options.models, (job) => jobs.push(job));
  const { reading: _reading, issues: _issues, ...rest } = manifest;
  return { ...rest, jobs };
}
