import type { JobScope, SendSelection } from '../ledger.js';

/**
 * The SQL of the ledger's two selections (ledger.ts: JobScope, SendSelection), written once for
 * every statement that filters by them. Each is a condition on the `jobs` table's columns.
 */

/** Jobs a scope covers: the manifest's, plus outstanding dropped ones for a report, or all. */
export function scopeSql(scope: JobScope): string {
  switch (scope) {
    case 'manifest':
      return 'in_manifest = 1';
    case 'report':
      // A job the manifest dropped after it was sent is still paid for: a summary must show it.
      return "(in_manifest = 1 OR state IN ('submitting', 'submitted'))";
    case 'all':
      return '1';
  }
}

/**
 * Jobs a run may send, with the named parameter `@resubmitInDoubt` (1 or 0): listed by the
 * manifest, and pending, skipped, failed at the service as retryable and refunded (nothing was
 * charged and the service says trying again may work), or in doubt when asked for.
 */
export const SEND_SQL = `in_manifest = 1 AND (
  state IN ('pending', 'skipped')
  OR (state = 'failed' AND retryable = 1 AND refunded = 1)
  OR (state = 'in_doubt' AND @resubmitInDoubt = 1))`;

export function sendParams(send: SendSelection): { resubmitInDoubt: number } {
  return { resubmitInDoubt: send.resubmitInDoubt ? 1 : 0 };
}
