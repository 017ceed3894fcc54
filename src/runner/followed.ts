import type { JobType } from '../jobs/types.js';
import type { ResolvedJob } from '../manifest/types.js';
import type { JobView } from '../store/index.js';

/**
 * What following a sent job and saving its result need: its id, its kind, and the extension a
 * result gets when its URL does not tell. The ledger row alone supplies it, so a job removed
 * from the manifest after it was sent (paid for) is still followed and collected.
 */
export interface FollowedJob {
  id: string;
  type: JobType;
  /** `format` for speech ('mp3', 'wav' …), 'mp4' for video. */
  fallbackExtension: string;
}

/** From the ledger's row: what was actually sent, even if the manifest changed since. */
export function followedFromView(view: Pick<JobView, 'id' | 'type' | 'format'>): FollowedJob {
  return { id: view.id, type: view.type, fallbackExtension: fallbackExtension(view.type, view.format) };
}

export function followedJob(job: ResolvedJob): FollowedJob {
  return { id: job.id, type: job.type, fallbackExtension: fallbackExtension(job.type, job.type === 'txt2audio' ? job.params.format : null) };
}

function fallbackExtension(type: JobType, format: string | null): string {
  if (type !== 'txt2audio') return 'mp4';
  return format ?? 'mp3';
}
