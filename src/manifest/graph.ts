/**
 * The graph of a manifest's references (`{ from: <id> }`), checked before anything is sent, from
 * either path: `validate` (read.ts checkJobs, from the jobs as they are read) and `estimate`/`run`
 * (from the ledger after ingest, a window at a time). Both call
 *
 *   checkGraph(refs: AsyncIterable<InputRef> | Iterable<InputRef>, locate: LocateRef): Promise<GraphCheck>
 *
 * - `InputRef`: one field of one job that takes another's result, with the upstream's type as the
 *   caller found it (undefined: no job has that id, ignoring case) and whether it is a split job's
 *   parent;
 * - `locate(ref)`: where the referring field is written (`ResolvedJob.fieldPositions`, or the
 *   ledger's stored origin), for the issue;
 * - `GraphCheck.issues`: every problem, located (a missing id, a result the field does not take, a
 *   split parent, a cycle named `a → b → a`).
 * Memory: the references that may close a cycle, until the end: every one whose upstream exists,
 * but those the caller marks `acyclic` (the ledger gives every job outside a cycle its step).
 */
import { kindOf, type JobType } from '../jobs/index.js';
import { accepts, resultFits } from '../jobs/inputs.js';
import type { MediaKind } from '../media-type.js';
import { expectedGot, formatGot, type ManifestIssue } from './errors.js';

export interface InputRef {
  jobId: string;
  jobType: JobType;
  /** The field's key, as `ResolvedJob.inputs` has it: `first_frame_image`, `images.1`, `text`. */
  field: string;
  fromId: string;
  fromType: JobType | undefined;
  fromSplit: boolean;
  /** Known to be in no cycle and fed by none: checked on its own, not kept for the walk. */
  acyclic?: boolean | undefined;
}

export type RefSite = Pick<ManifestIssue, 'file' | 'line' | 'col' | 'jobIndex' | 'fromDefaults'>;
export type LocateRef = (ref: InputRef) => RefSite | Promise<RefSite>;

export interface GraphCheck {
  issues: ManifestIssue[];
}

type Problem = { expected: string; got: string; hint: string };

const MEDIA_WORDS: Readonly<Record<MediaKind, string>> = {
  image: 'an image',
  audio: 'audio',
  video: 'a video',
  text: 'text',
  embedding: 'an embedding',
};
const mediaWords = (media: readonly MediaKind[]): string => media.map((kind) => MEDIA_WORDS[kind]).join(' or ');

/** What is wrong with one reference on its own, or undefined. */
function refProblem(ref: InputRef): Problem | undefined {
  const id = formatGot(ref.fromId);
  if (ref.fromType === undefined) {
    const hint = 'give the id of the job whose result it takes';
    return { expected: 'the id of a job of this manifest', got: `${id} (no job has this id)`, hint };
  }
  if (!resultFits(ref.jobType, ref.field, ref.fromType)) {
    const words = mediaWords(accepts(ref.jobType, ref.field));
    return {
      expected: `the id of a job that makes ${words}`,
      got: `${id} (${ref.fromType}, which makes ${mediaWords([kindOf(ref.fromType).output.media])})`,
      hint: `refer to a job that makes ${words}, or give ${ref.field.replace(/\.\d+$/, '')} a value of its own`,
    };
  }
  if (ref.fromSplit) {
    const hint = `refer to one of its parts (${formatGot(`${ref.fromId}.p001`)} …), or do not split it`;
    return { expected: 'the id of a job that is not split into parts', got: `${id} (split into parts)`, hint };
  }
  return undefined;
}

const fold = (id: string): string => id.replace(/[A-Z]/g, (c) => c.toLowerCase());

async function issueOf(locate: LocateRef, ref: InputRef, problem: Problem): Promise<ManifestIssue> {
  const { hint, ...words } = problem;
  const site = await locate(ref);
  return { ...site, jobId: ref.jobId, field: ref.field, ...expectedGot(words.expected, words.got), hint };
}

/** Checks every reference (see the top of this file); nothing here reads a file or the service. */
export async function checkGraph(
  refs: AsyncIterable<InputRef> | Iterable<InputRef>,
  locate: LocateRef,
): Promise<GraphCheck> {
  const issues: ManifestIssue[] = [];
  const edges = new Map<string, InputRef[]>();
  for await (const ref of refs) {
    const problem = refProblem(ref);
    if (problem !== undefined) {
      issues.push(await issueOf(locate, ref, problem));
      continue;
    }
    if (ref.acyclic === true) continue;
    const key = fold(ref.jobId);
    const list = edges.get(key);
    if (list === undefined) edges.set(key, [ref]);
    else list.push(ref);
  }
  for (const { ref, names } of cycles(edges)) {
    const expected = 'references that do not lead back to this job';
    const hint = 'one of these jobs must take this field from a file or a text of its own';
    issues.push(await issueOf(locate, ref, { expected, got: `a cycle: ${names.join(' → ')}`, hint }));
  }
  return { issues };
}

const ON_STACK = 1;
const DONE = 2;

interface Cycle {
  ref: InputRef;
  names: string[];
}

interface Frame {
  key: string;
  refs: InputRef[];
  next: number;
}

/**
 * Depth first, without recursion (a chain may be as long as the manifest): each cycle once, named
 * from the job whose reference closes it.
 */
function cycles(edges: ReadonlyMap<string, InputRef[]>): Cycle[] {
  const state = new Map<string, number>();
  const found: Cycle[] = [];
  for (const [start, refs] of edges) {
    if (state.has(start)) continue;
    state.set(start, ON_STACK);
    const stack: Frame[] = [{ key: start, refs, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as Frame;
      const ref = top.refs[top.next++];
      if (ref === undefined) {
        stack.pop();
        state.set(top.key, DONE);
        continue;
      }
      const to = fold(ref.fromId);
      const next = edges.get(to);
      if (next === undefined) continue;
      const known = state.get(to);
      if (known === undefined) {
        state.set(to, ON_STACK);
        stack.push({ key: to, refs: next, next: 0 });
      } else if (known === ON_STACK) {
        // Named once: another reference back into the same loop is not a second cycle.
        const loop = stack.slice(stack.findIndex((frame) => frame.key === to));
        for (const frame of loop) state.set(frame.key, DONE);
        const ids = loop.map((frame) => frame.refs[0]?.jobId ?? frame.key);
        found.push({ ref, names: [ids[ids.length - 1] ?? '', ...ids] });
      }
    }
  }
  return found;
}
