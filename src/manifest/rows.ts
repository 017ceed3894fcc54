import type { Model } from '../api/types.js';
import { catalogueIssues } from './catalogue.js';
import { draftJob, type DefaultsBlock, type DraftContext, type RowSite } from './draft.js';
import type { ManifestIssue } from './errors.js';
import { finishJob, type FinishContext, type ReadFile } from './finish.js';
import { jobItemSchema } from './schema.js';
import { translateSchemaIssues, type IssueSite } from './schema-issues.js';
import { partsOf, splitModeOf } from './parts.js';
import { checkJobTexts } from './text-checks.js';
import type { ResolvedJob } from './types.js';
import type { MapLocation } from './yaml-source.js';

/** What every row of one reading shares. */
export interface RowContext {
  draft: DraftContext;
  finish: FinishContext;
  /** The manifest's path as messages show it. */
  file: string;
  /** The service's catalogue, when it is known: each job is checked against it. */
  models?: readonly Model[] | undefined;
  /** jobItemSchema(), made once per reading. */
  schema: ReturnType<typeof jobItemSchema>;
}

/** One row to resolve: an inline job, or a row a source yielded. */
export interface RowInput {
  /** Manifest order (see ResolvedJob.index). */
  index: number;
  /** The row's own fields, as written (`type` among them when the row gives it); not a mapping is a problem. */
  raw: unknown;
  /** Where schema problems are placed: `site.prefix` leads from `site.root` to this row. */
  site: IssueSite & { jobIndex?: number | undefined };
  /** Where the row's own fields are written. */
  location: MapLocation;
  /** Fields its source entry gives every row (`type` among them when the entry gives it). */
  entry?: DefaultsBlock | undefined;
}

/** What a duplicate message needs of a job: its id, and where it is. */
export type Claimant = Pick<ResolvedJob, 'id' | 'idDerived' | 'inlineIndex' | 'position' | 'fieldPositions'>;

/**
 * A row resolved: its job (or none, with its problems), and the files its content was read from.
 * A row with problems that gives a usable id still `claims` it, so a second job with that id is
 * reported in the same pass.
 */
export interface RowOutcome {
  /** The row's job; the parts of its text when it is split (`split:`); none when it has problems. */
  jobs: ResolvedJob[];
  claim?: Claimant | undefined;
  files: ReadFile[];
  issues: ManifestIssue[];
}

/**
 * One row through every check an inline job gets: the schema (unknown fields, types), texts that
 * cannot be sent, the defaults merged, required fields, its files read and hashed, its id, and the
 * catalogue when it is known. Every problem is reported, located, with the job's id when it has one.
 */
export async function resolveRow(ctx: RowContext, input: RowInput): Promise<RowOutcome> {
  const { site } = input;
  if (input.raw === null || typeof input.raw !== 'object' || Array.isArray(input.raw)) {
    // Not a mapping: the schema says what was expected; there is nothing to resolve.
    const parsed = ctx.schema.safeParse(input.raw);
    return { jobs: [], files: [], issues: translateSchemaIssues(site, parsed.success ? [] : parsed.error.issues).issues };
  }
  const raw = input.raw as Record<string, unknown>;
  const type = raw['type'] ?? input.entry?.values['type'];
  // A source's row carries its type already; an inline job may take it from its entry.
  const typed = raw['type'] === type ? raw : { ...raw, type };
  const parsed = ctx.schema.safeParse(typed);
  const check = translateSchemaIssues(site, parsed.success ? [] : parsed.error.issues);
  const prefix = site.prefix ?? [];
  checkJobTexts(site.file, site.locate, typed, [...prefix], check, site.jobIndex);
  const rowSite: RowSite = { file: site.file, jobIndex: site.jobIndex, invalid: fieldsUnder(check.invalidPaths, prefix), entry: input.entry, issues: check.issues };
  const draft = draftJob(ctx.draft, rowSite, input.index, raw, type, input.location);
  const tags = raw['tags'] ?? input.entry?.values['tags'];
  const usableTags = Array.isArray(tags) && !rowSite.invalid.has('tags') ? (tags as string[]) : undefined;
  const finished = draft === undefined ? undefined : await finishJob(ctx.finish, rowSite, draft, usableTags);
  const label = (id: unknown): ManifestIssue[] => (typeof id !== 'string' ? check.issues : check.issues.map((issue) => ({ ...issue, jobId: id })));
  if (finished === undefined || draft === undefined) {
    const usable = draft?.givenId !== undefined && !rowSite.invalid.has('id');
    const claim = usable ? { id: draft.givenId as string, idDerived: false, inlineIndex: site.jobIndex, position: draft.start, fieldPositions: draft.positions } : undefined;
    return { jobs: [], files: [], issues: label(raw['id']), ...(claim === undefined ? {} : { claim }) };
  }
  const { job } = finished;
  const issues = label(job.id);
  const split = rowSite.invalid.has('split') ? undefined : splitModeOf(raw['split'] ?? input.entry?.values['split']);
  const parts = partsOf(job, split, ctx.models, ctx.file);
  issues.push(...parts.issues);
  // The parts differ from each other only in their text, each within the limit: the first speaks for all.
  const checked = parts.jobs[0];
  if (ctx.models !== undefined && checked !== undefined) issues.push(...catalogueIssues({ ...checked, id: job.id }, ctx.models, ctx.file));
  if (issues.length > 0) return { jobs: [], claim: job, files: finished.files, issues };
  // A split job's own id names its joined result and playlist: no other job may hold it.
  return { jobs: parts.jobs, files: finished.files, issues, ...(parts.jobs[0] === job ? {} : { claim: job }) };
}

/** `jobs.3.voice` under prefix `jobs.3` → `voice`: the row's own fields the schema rejected. */
function fieldsUnder(paths: ReadonlySet<string>, prefix: readonly (string | number)[]): Set<string> {
  const head = prefix.length === 0 ? '' : `${prefix.join('.')}.`;
  const fields = new Set<string>();
  for (const path of paths) {
    if (!path.startsWith(head)) continue;
    const field = path.slice(head.length).split('.')[0];
    if (field !== undefined && field !== '') fields.add(field);
  }
  return fields;
}
