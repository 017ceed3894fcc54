import type { JobType, ResolvedJob } from '../jobs/index.js';
import type { DefaultsBlock } from './draft.js';
import type { SourceEntry } from './sources/index.js';
import type { ManifestIssue } from './errors.js';
import type { FileScope } from './file-scope.js';
import type { ManifestSource } from './yaml-source.js';

export type { FieldPosition, ImageRef, JobType, ResolvedJob, SourcePosition } from '../jobs/index.js';

/** A manifest as it was opened; its jobs are read unit by unit (manifest/read.ts), never all held at once. */
export interface Manifest {
  /** Absolute; `displayPath` is as the user gave it, for messages. */
  path: string;
  displayPath: string;
  budgetUsd?: number | undefined;
  /** In manifest order: the inline `jobs:`, then each of `sources:`. */
  units: ManifestUnit[];
  /** Problems found when it was opened (top level, defaults, sources): reported with its jobs'. */
  issues: ManifestIssue[];
  reading: ManifestReading;
}

/** Where a manifest's jobs come from: its inline `jobs:` list, or one entry of `sources:`. */
export interface ManifestUnit {
  /** Stable while the manifest does not change what the unit is: the ledger keys its jobs by it. */
  key: string;
  /** 0 for the inline jobs, then 1, 2, … for sources in the order they are written. */
  position: number;
  kind: 'jobs' | 'csv' | 'tsv' | 'jsonl' | 'files' | 'matrix';
  /** How messages name it: `jobs:`, `csv chapters.csv`. */
  label: string;
  /** `index`: 0-based in `sources:`. */
  source?: { entry: SourceEntry; index: number } | undefined;
}

export interface ManifestReading {
  source: ManifestSource;
  defaults: Record<JobType, DefaultsBlock>;
  scope: FileScope;
  /** Where a JSON Lines source named `-` reads from instead of a file (stdin). */
  input?: import('node:stream').Readable | undefined;
}

/** A manifest read whole, for small manifests and tests. */
export interface LoadedManifest extends Omit<Manifest, 'reading' | 'issues'> {
  jobs: ResolvedJob[];
}
