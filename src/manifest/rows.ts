import { resolve } from 'node:path';
import type { Model } from '../api/types.js';
import { kindOf, type ImageRef, type ResolvedJob } from '../jobs/index.js';
import { catalogueIssues, partsOf, splitModeOf } from './catalogue.js';
import { countChars, contentHash, imageHashes } from './content-hash.js';
import { draftJob, type DraftContext, issueAt, type JobDraft, type RowSite } from './draft.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import type { Claimant } from './ids.js';
import { checkImage, type FileCache, type FileCheck, readTextFile } from './files.js';
import { jobItemSchema } from './schema.js';
import { translateSchemaIssues, type IssueSite } from './schema-issues.js';
import type { MapLocation } from './yaml-source.js';

/** What every row of one reading shares: `dir` is the manifest's folder, `file` its path as messages show it. */
export interface RowContext extends DraftContext {
  dir: string;
  cache: FileCache;
  file: string;
  /** The service's catalogue, when it is known. */
  models?: readonly Model[] | undefined;
  schema: ReturnType<typeof jobItemSchema>;
}

/** One row to resolve: an inline job, or a row a source yielded. */
export interface RowInput {
  index: number;
  raw: unknown;
  /** Where schema problems are placed: `site.prefix` leads from `site.root` to this row. */
  site: IssueSite & { jobIndex?: number | undefined };
  location: MapLocation;
}

/** A file a job's content was read from, with its stamp: what tells a later reading it changed. */
export interface ReadFile {
  path: string;
  stamp: string;
}

/**
 * A row resolved: its job, or the parts of its split text, or none with its problems. A row with
 * problems that gives a usable id still `claims` it, so a second job with that id is reported too.
 */
export interface RowOutcome {
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
  const parsed = ctx.schema.safeParse(input.raw);
  const check = translateSchemaIssues(site, parsed.success ? [] : parsed.error.issues);
  const raw = input.raw as Record<string, unknown>;
  // Not a mapping: the schema says what was expected; there is nothing to resolve.
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { jobs: [], files: [], issues: check.issues };
  }
  const prefix = site.prefix ?? [];
  const invalid = fieldsUnder(check.invalidPaths, prefix);
  const rowSite: RowSite = { file: site.file, jobIndex: site.jobIndex, invalid, issues: check.issues };
  const draft = draftJob(ctx, rowSite, input.index, raw, input.location);
  const usableTags = Array.isArray(raw['tags']) && !rowSite.invalid.has('tags') ? (raw['tags'] as string[]) : undefined;
  const finished = draft === undefined ? undefined : await finishJob(ctx, rowSite, draft, usableTags);
  const label = (id: unknown): ManifestIssue[] => (typeof id !== 'string' ? check.issues : check.issues.map((issue) => ({ ...issue, jobId: id })));
  if (finished === undefined || draft === undefined) {
    const usable = draft?.givenId !== undefined && !rowSite.invalid.has('id');
    const claim = usable ? { id: draft.givenId as string, idDerived: false, inlineIndex: site.jobIndex, position: draft.start, fieldPositions: draft.positions } : undefined;
    return { jobs: [], files: [], issues: label(raw['id']), ...(claim === undefined ? {} : { claim }) };
  }
  const { job } = finished;
  const issues = label(job.id);
  const split = rowSite.invalid.has('split') ? undefined : splitModeOf(raw['split']);
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

function fileIssue<T>(site: RowSite, draft: JobDraft, field: string, written: string, check: FileCheck<T>): T | undefined {
  if (check.ok) return check.value;
  const hint = check.hint === undefined ? {} : { hint: check.hint };
  const body = { field, ...expectedGot(check.expected, `${JSON.stringify(written)} (${check.detail})`), ...hint };
  site.issues.push(issueAt(site, draft.positions[field] ?? draft.start, body));
  return undefined;
}

interface ReadFiles {
  text?: string | undefined;
  images: Record<string, ImageRef>;
  files: ReadFile[];
  /** A file named by the job could not be used (already reported). */
  failed: boolean;
}

/** Reads every file the job names, as its kind says what each must be; every problem reported. */
async function readFiles(ctx: RowContext, site: RowSite, draft: JobDraft): Promise<ReadFiles> {
  const read: ReadFiles = { images: {}, files: [], failed: false };
  const named = Object.entries(kindOf(draft.type).files).flatMap(([field, sort]) => {
    const written = draft.fields[field];
    return typeof written === 'string' ? [{ field, sort, written }] : [];
  });
  // Most rows of a big source name no file: no promise for each of them.
  if (named.length === 0) return read;
  await Promise.all(
    named.map(async ({ field, sort, written }) => {
      const path = resolve(ctx.dir, written);
      if (sort === 'text') {
        const info = fileIssue(site, draft, field, written, await readTextFile(ctx.cache, path));
        read.text = info?.text;
        if (info === undefined) read.failed = true;
        else read.files.push({ path: info.path, stamp: info.stamp });
        return;
      }
      const info = fileIssue(site, draft, field, written, await checkImage(ctx.cache, path));
      if (info === undefined) {
        read.failed = true;
        return;
      }
      const { stamp, ...image } = info;
      read.images[field] = { ...image, written };
      read.files.push({ path: info.path, stamp });
    }),
  );
  return read;
}

/**
 * Reads the job's files, hashes its resolved content and names it (its given id, or one derived
 * from the hash). Derived ids and change detection rest on the content hash, so its input keeps
 * one shape for every kind: the parameters (files and text apart), the text, each image's sha256.
 */
async function finishJob(
  ctx: RowContext,
  site: RowSite,
  draft: JobDraft,
  tags: readonly string[] | undefined,
): Promise<{ job: ResolvedJob; files: ReadFile[] } | undefined> {
  const kind = kindOf(draft.type);
  const files = await readFiles(ctx, site, draft);
  const textField = kind.textFrom?.field;
  const text = files.text ?? (textField === undefined ? undefined : (draft.fields[textField] as string | undefined));
  if (!draft.complete || files.failed || (textField !== undefined && text === undefined)) return undefined;
  const params: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(draft.fields)) {
    if (value !== undefined && field !== textField && !(field in kind.files)) params[field] = value;
  }
  const textFile = textField === undefined ? undefined : draft.fields[kind.textFrom?.file ?? ''];
  const hash = contentHash({ type: draft.type, params, text, images: imageHashes(files.images) });
  // Derived: stable under reordering, new on any content change.
  const id = draft.givenId ?? `${draft.type}-${hash.slice(0, 16)}`;
  // Every field named, none spread: a literal that starts with a spread is built in V8's slow
  // dictionary mode, and each of a million jobs is read field by field on its way to the ledger.
  const job: ResolvedJob = {
    id,
    idDerived: draft.givenId === undefined,
    index: draft.index,
    inlineIndex: site.jobIndex,
    type: draft.type,
    contentHash: hash,
    params,
    text,
    textChars: text === undefined ? undefined : countChars(text),
    textFile: typeof textFile === 'string' ? textFile : undefined,
    images: files.images,
    tags,
    position: draft.start,
    fieldPositions: draft.positions,
  };
  return { job, files: files.files };
}
