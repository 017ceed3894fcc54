import type { ResolvedJob } from '../jobs/index.js';

export type { FieldPosition, ImageRef, JobType, ResolvedJob, SourcePosition } from '../jobs/index.js';

export interface Manifest {
  /** Absolute path of the manifest file. */
  path: string;
  /** The path as the user gave it (relative if they gave a relative one), for messages. */
  displayPath: string;
  budgetUsd?: number | undefined;
  jobs: ResolvedJob[];
}
