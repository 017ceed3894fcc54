import { deriveId } from './content-hash.js';
import type { JobDraft } from './draft.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import type { UnnamedJob } from './finish.js';
import type { ResolvedJob } from './types.js';

export interface JobEntry {
  draft: JobDraft | undefined;
  job: UnnamedJob | undefined;
}

interface Claimed {
  index: number;
  id: string;
  derived: boolean;
}

function duplicateGot(id: string, derived: boolean, first: Claimed): string {
  if (derived && first.derived) return `"${id}" (derived; job #${first.index + 1} has identical content)`;
  if (first.id !== id) return `"${id}" (job #${first.index + 1} has "${first.id}")`;
  return `"${id}" (also the id of job #${first.index + 1})`;
}

function duplicateHint(id: string, derived: boolean, first: Claimed): string | undefined {
  if (derived && first.derived) return 'give these jobs ids of their own if both should run';
  if (first.id !== id) return 'ids become file names, and some file systems ignore case';
  return undefined;
}

/**
 * Gives every job its id (the given one, or `<type>-<hash prefix>`) and reports duplicates.
 * Ids are compared ignoring case because they become file names. `labels` holds the id of every
 * job that has one, for the job part of messages.
 */
export function assignIds(file: string, entries: readonly JobEntry[], issues: ManifestIssue[]): { jobs: ResolvedJob[]; labels: Map<number, string> } {
  const jobs: ResolvedJob[] = [];
  const labels = new Map<number, string>();
  const claimed = new Map<string, Claimed>();
  for (const { draft, job } of entries) {
    if (draft === undefined) continue;
    const derived = draft.givenId === undefined;
    const id = draft.givenId ?? (job === undefined ? undefined : deriveId(job.type, job.contentHash));
    if (id === undefined) continue;
    labels.set(draft.index, id);
    const first = claimed.get(id.toLowerCase());
    if (first !== undefined) {
      const at = draft.positions['id'] ?? draft.start;
      const hint = duplicateHint(id, derived, first);
      const body = expectedGot('a unique id', duplicateGot(id, derived, first));
      issues.push({ file, line: at.line, col: at.col, jobIndex: draft.index, field: 'id', ...body, ...(hint === undefined ? {} : { hint }) });
      continue;
    }
    claimed.set(id.toLowerCase(), { index: draft.index, id, derived });
    if (job !== undefined) jobs.push({ ...job, id, idDerived: derived } as ResolvedJob);
  }
  return { jobs, labels };
}
