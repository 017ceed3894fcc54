import { UsageError } from '../errors.js';
import type { JobState } from '../jobs/states.js';
import type { JobPick, ListingLedger, PlanLedger, SendSelection } from '../store/index.js';

/** What a person asked a run (or an estimate) to send: `--only`, `--tag`, `--redo`. */
export type Selection = Omit<SendSelection, 'resubmitInDoubt'>;

/** Why a job that is neither done nor failed cannot be generated again, and what sends it instead. */
const NOT_REDONE: Record<Exclude<JobState, 'done' | 'failed'>, string> = {
  pending: 'a run sends it as it is',
  skipped: 'a run sends it as it is',
  submitting: 'a run stopped while sending it; the next run marks it in doubt',
  submitted: 'it is on its way: a run collects it',
  in_doubt: 'only --resubmit-in-doubt sends it again',
  blocked: 'it waits for an input that failed: --redo or --retries of that input sends it',
};

/**
 * Refuses (exit 2, before anything is priced or sent) a selection that cannot mean what it
 * says: an `--only` pattern or a `--tag` that no job of the manifest matches (a typo would
 * otherwise send nothing, or everything else), and a `--redo` id that is not a done or failed job
 * of the manifest or that the `--only`/`--tag` pick leaves out. Every problem is named at once.
 */
export async function checkSelection(ledger: ListingLedger & PlanLedger, send: SendSelection): Promise<void> {
  const problems: string[] = [];
  const unmatched = await ledger.unmatchedPicks(send);
  for (const pattern of unmatched.only) problems.push(`--only ${JSON.stringify(pattern)} matches no job of the manifest`);
  for (const tag of unmatched.tags) problems.push(`--tag ${JSON.stringify(tag)}: no job of the manifest carries this tag`);
  const redone: string[] = [];
  for (const id of new Set(send.redo ?? [])) {
    const job = await ledger.getJob(id);
    if (job === undefined || !job.inManifest) problems.push(`--redo ${JSON.stringify(id)}: no job of the manifest has this id`);
    else if (job.state !== 'done' && job.state !== 'failed') problems.push(`--redo ${JSON.stringify(id)}: the job is ${job.state}, not done or failed (${NOT_REDONE[job.state]})`);
    else redone.push(id);
  }
  if (problems.length === 0) problems.push(...(await unpickedRedo(ledger, send, redone)));
  if (problems.length > 0) {
    throw new UsageError(
      `${problems.join('; ')}. Nothing was sent. (--only takes ids or globs such as "ch-0*", matched case-sensitively against the whole id; --redo takes ids of done or failed jobs)`,
    );
  }
}

/** Jobs named by --redo that --only/--tag leave out: they would not be sent. */
async function unpickedRedo(ledger: ListingLedger, send: SendSelection, redone: readonly string[]): Promise<string[]> {
  if (redone.length === 0 || !picks(send)) return [];
  const pick: JobPick = { only: send.only, tags: send.tags };
  // Of the named jobs (ids hold no glob characters), those the selection sends.
  const named = (ids: readonly string[]) => ({ scope: 'manifest' as const, pick: { only: ids }, send: { resubmitInDoubt: false, redo: ids, ...pick } });
  if ((await ledger.countJobs(named(redone))) === redone.length) return [];
  const left: string[] = [];
  for (const id of redone) {
    const sent = await ledger.countJobs(named([id]));
    if (sent === 0) left.push(`--redo ${JSON.stringify(id)} is left out by --only/--tag, so it would not be sent: add it to --only, or leave it out of --redo`);
  }
  return left;
}

/** Whether a pick narrows anything down. */
export function picks(pick: JobPick): boolean {
  return (pick.only?.length ?? 0) > 0 || (pick.tags?.length ?? 0) > 0;
}

/** How many jobs a pick covers (those of the manifest, and dropped ones still to collect) and how many are done. */
export async function pickedCounts(ledger: ListingLedger, pick: JobPick): Promise<{ jobs: number; done: number }> {
  return {
    jobs: await ledger.countJobs({ scope: 'report', pick }),
    done: await ledger.countJobs({ scope: 'report', pick, states: ['done'] }),
  };
}
