import { Readable } from 'node:stream';
import { UsageError } from '../errors.js';
import type { JobType } from '../jobs/index.js';
import { openManifest, STDIN_MANIFEST, type Manifest } from '../manifest/open.js';

/** One job as a manifest writes it: its kind (the service's endpoint name), its id and tags, that kind's fields. */
export interface JobObject {
  type: JobType;
  id?: string;
  tags?: string[];
  [field: string]: unknown;
}

/** A manifest as a value: what its YAML would hold (docs/manifest.md). */
export interface ManifestObject {
  version: 1;
  /** USD: a cap on the whole spend for this manifest; the `budget` option overrides it. */
  budget?: number;
  defaults?: Partial<Record<JobType, Record<string, unknown>>>;
  jobs?: JobObject[];
  sources?: Record<string, unknown>[];
}

/**
 * A manifest file's path, a manifest as a value, or jobs (an array, or any iterable or async
 * iterable: a generator, a database cursor, a queue), which are streamed through the ledger as
 * the CLI streams JSON Lines from stdin. Files the last two name are relative to the current folder.
 */
export type ManifestInput = string | ManifestObject | Iterable<JobObject> | AsyncIterable<JobObject>;

/** How messages name a manifest given as a value, and jobs given as an iterable (`<jobs>:3` is the third job). */
const OBJECT_NAME = '<manifest>';
const JOBS_NAME = '<jobs>';

/**
 * Opens the manifest in any of its forms. `arg` is what names its ledger, results and reports:
 * its path, or `-` for the last two forms, which have no file to be named after (as stdin).
 */
export async function openManifestInput(
  input: ManifestInput,
  allowOutsideFiles = false,
): Promise<{ manifest: Manifest; arg: string }> {
  if (typeof input === 'string') {
    if (input === STDIN_MANIFEST) {
      throw new UsageError('manifest: "-" (stdin) is for the command line; give the jobs as an iterable instead');
    }
    return { manifest: await openManifest(input, { allowOutsideFiles }), arg: input };
  }
  if (Symbol.iterator in input || Symbol.asyncIterator in input) {
    const lines = Readable.from(jsonLines(input));
    const manifest = await openManifest(STDIN_MANIFEST, { allowOutsideFiles, input: lines, inputName: JOBS_NAME });
    return { manifest, arg: STDIN_MANIFEST };
  }
  // A copy through JSON: the caller's later changes cannot reach the jobs, and only plain data comes through.
  const root: unknown = JSON.parse(JSON.stringify(input));
  return { manifest: await openManifest(OBJECT_NAME, { allowOutsideFiles, root }), arg: STDIN_MANIFEST };
}

async function* jsonLines(jobs: Iterable<JobObject> | AsyncIterable<JobObject>): AsyncGenerator<string> {
  for await (const job of jobs) yield `${JSON.stringify(job)}\n`;
}
