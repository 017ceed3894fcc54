import type { JobType } from '../jobs/types.js';
import type { FollowRow } from '../store/index.js';

/**
 * What following a sent job and saving its result need: its id, its kind, and the parameters
 * that name its result file (a speech job's `format`). The ledger row alone supplies them, so a
 * job removed from the manifest after it was sent (paid for) is still followed and collected.
 */
export interface FollowedJob {
  id: string;
  type: JobType;
  params: Readonly<Record<string, unknown>>;
}

/** From the ledger's row: what was actually sent, even if the manifest changed since. */
export function followedFromRow(row: Pick<FollowRow, 'id' | 'type' | 'paramsJson'>): FollowedJob {
  return { id: row.id, type: row.type, params: JSON.parse(row.paramsJson) as Record<string, unknown> };
}
