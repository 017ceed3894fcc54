import type { JobPick, JobScope, SendSelection } from '../ledger.js';

/**
 * The SQL of the ledger's selections (ledger.ts: JobScope, JobPick, SendSelection), written once
 * for every statement that filters by them. Each is a condition on the `jobs` table's columns,
 * with named parameters; a prefix keeps two selections apart in one statement.
 */

// A job the manifest dropped after it was sent is still paid for, and one in doubt may be: a
// summary shows both until they are settled, and a paid result for good. A failure is left out:
// nothing of it is to collect, and a run could never again say every job is done.
const PAID_SQL = "state IN ('submitting', 'submitted', 'in_doubt', 'done')";

/** Jobs a scope covers: the manifest's, plus paid dropped ones for a report, those alone, or all. */
export const SCOPE_SQL: Record<JobScope, string> = {
  manifest: 'in_manifest = 1',
  report: `(in_manifest = 1 OR ${PAID_SQL})`,
  dropped: `(in_manifest = 0 AND ${PAID_SQL})`,
  all: '1',
};

/** `*`, `?` and `[` make a pattern a glob; a pattern without them matches one id exactly. */
export const isGlob = (pattern: string): boolean => /[*?[]/.test(pattern);

/**
 * Jobs a person picked, with the parameters of pickParams. Exact ids are looked up in a set
 * built once per statement; only the globs are tried row by row (SQLite's GLOB matches the
 * whole id, case-sensitively, as a shell matches file names), so a list of ten thousand ids
 * piped from `status --format ids` costs no more than one. Both lists are JSON arrays.
 */
export function pickSql(prefix = ''): string {
  const p = `@${prefix}`;
  return `(${p}pickOnly = 0 OR jobs.id IN (SELECT value FROM json_each(${p}onlyIds))
    OR EXISTS (SELECT 1 FROM json_each(${p}onlyGlobs) AS g WHERE jobs.id GLOB g.value))
  AND (${p}pickTags = 0 OR EXISTS (SELECT 1 FROM json_each(jobs.tags_json) AS t WHERE t.value IN (SELECT value FROM json_each(${p}tags))))`;
}

export function pickParams(pick: JobPick, prefix = ''): Record<string, number | string> {
  const only = pick.only ?? [];
  const tags = pick.tags ?? [];
  return {
    [`${prefix}pickOnly`]: only.length > 0 ? 1 : 0,
    [`${prefix}onlyIds`]: JSON.stringify(only.filter((p) => !isGlob(p))),
    [`${prefix}onlyGlobs`]: JSON.stringify(only.filter(isGlob)),
    [`${prefix}pickTags`]: tags.length > 0 ? 1 : 0,
    [`${prefix}tags`]: JSON.stringify(tags),
  };
}

/**
 * Jobs a run may send, with the parameters of sendParams: listed by the manifest, picked, and
 * pending, skipped, failed at the service as retryable and refunded (nothing was charged and
 * the service says trying again may work), in doubt when asked for, or done or failed and named
 * to be generated again.
 */
export function sendSql(prefix = ''): string {
  const p = `@${prefix}`;
  return `in_manifest = 1 AND (
  state IN ('pending', 'skipped')
  OR (state = 'failed' AND retryable = 1 AND refunded = 1)
  OR (state = 'in_doubt' AND ${p}resubmitInDoubt = 1)
  OR (state IN ('done', 'failed') AND jobs.id IN (SELECT value FROM json_each(${p}redo))))
  AND ${pickSql(prefix)}`;
}

/** The selection of the statements prepared once (every one but a listing's flag). */
export const SEND_SQL = sendSql();

export function sendParams(send: SendSelection, prefix = ''): Record<string, number | string> {
  return {
    [`${prefix}resubmitInDoubt`]: send.resubmitInDoubt ? 1 : 0,
    [`${prefix}redo`]: JSON.stringify(send.redo ?? []),
    ...pickParams(send, prefix),
  };
}

/** Every input of the job is done (a job without inputs is ready), through job_inputs' primary key. */
export const READY_SQL = `NOT EXISTS (SELECT 1 FROM job_inputs AS i LEFT JOIN jobs AS u ON u.id = i.from_id
  WHERE i.job_id = jobs.id AND u.state IS NOT 'done')`;
