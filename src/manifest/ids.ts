import { expectedGot, type ManifestIssue } from './errors.js';
import type { ResolvedJob } from './types.js';

/** Where a job is written, as messages and the ledger name it: `file:line:col`. */
export function originOf(job: Pick<ResolvedJob, 'position'>, manifestFile: string): string {
  return `${job.position.file ?? manifestFile}:${job.position.line}:${job.position.col}`;
}

/**
 * The problem of a job whose id another job of the manifest already holds (compared ignoring
 * case). Found while reading (manifest/load.ts) or by the ledger when jobs stream into it.
 */
export function duplicateIssue(
  job: Claimant,
  manifestFile: string,
  heldBy: { id: string; origin: string | null },
): ManifestIssue {
  const where = heldBy.origin ?? 'an earlier job';
  let got = `"${job.id}" (also the id of the job at ${where})`;
  let hint: string | undefined;
  if (heldBy.id !== job.id) {
    got = `"${job.id}" (the job at ${where} has "${heldBy.id}")`;
    hint = 'ids become file names, and some file systems ignore case';
  } else if (job.idDerived) {
    got = `"${job.id}" (derived; the job at ${where} has identical content)`;
    hint = 'give these jobs ids of their own if both should run';
  }
  return idIssue(job, manifestFile, { expected: 'a unique id', got, hint });
}

/**
 * The problem of a job whose content another id was already paid for: sent under its new id it
 * would be paid twice, and the id that had it would keep a result that is not its content now.
 */
export function movedIssue(job: IdJob, manifestFile: string, paidAs: { id: string; state: string }): ManifestIssue {
  return idIssue(job, manifestFile, {
    expected: 'an id that keeps its content between runs',
    got: `"${job.id}", whose content "${paidAs.id}" was already sent with (${paidAs.state})`,
    hint:
      'ids from a row number ({n}) shift when a row is inserted: give the rows ids of their own (an id column keeping the ids already run), or add new rows at the end',
  });
}

/** What a duplicate message needs of a job: its id, and where it is. */
export type Claimant = Pick<ResolvedJob, 'id' | 'idDerived' | 'inlineIndex' | 'position' | 'fieldPositions'>;
type IdJob = Omit<Claimant, 'idDerived'>;

/** A problem with a job's id, located at its `id:` (or at the job when the id was derived). */
export function idIssue(job: IdJob, manifestFile: string, problem: { expected: string; got: string; hint?: string | undefined }): ManifestIssue {
  const at = job.fieldPositions['id'] ?? job.position;
  return {
    file: at.file ?? manifestFile,
    line: at.line,
    col: at.col,
    ...(job.inlineIndex === undefined ? {} : { jobIndex: job.inlineIndex }),
    jobId: job.id,
    field: 'id',
    ...expectedGot(problem.expected, problem.got),
    ...(problem.hint === undefined ? {} : { hint: problem.hint }),
  };
}
