import { resolve } from 'node:path';
import type { Model } from '../api/types.js';
import { factOf, isJobType, kindOf, requiredFor, type FieldPosition, type JobType, type MediaRef } from '../jobs/index.js';
import type { ResolvedJob, SourcePosition } from '../jobs/index.js';
import { catalogueIssues, partsOf, splitModeOf } from './catalogue.js';
import { countChars, contentHash, imageHashes } from './content-hash.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import { fieldSpecFor, fromOf } from './fields.js';
import { checkMedia, type FileCache, type FileCheck, readTextFile } from './files.js';
import type { Claimant } from './ids.js';
import { priceBound, type PriceBound } from './price-bound.js';
import type { DefaultsBlock } from './open.js';
import { translateSchemaIssues, type IssueSite } from './schema-issues.js';
import { jobItemSchema } from './schema.js';

/**
 * What every row of one reading shares: `dir` is the manifest's folder, `file` its path as messages
 * show it; `takesDefaults`: the manifest has a `defaults:` to take (stdin has none).
 */
export interface RowContext {
  defaults: Record<JobType, DefaultsBlock>;
  takesDefaults: boolean;
  dir: string;
  cache: FileCache;
  file: string;
  models?: readonly Model[] | undefined;
  schema: ReturnType<typeof jobItemSchema>;
}

/** One row to resolve: an inline job, or a row a source yielded. */
export interface RowInput {
  index: number;
  raw: unknown;
  /** Where schema problems are placed: `site.prefix` leads from `site.root` to this row. */
  site: IssueSite;
  /** Where the row starts, and where it writes a field's value (undefined: it does not). */
  location: { start: SourcePosition; valueAt(field: string): SourcePosition | undefined };
}

type RowLocation = RowInput['location'];

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
  media: Record<string, MediaRef>;
  /** The facts its kind prices by, by the parameter each is copied to. */
  facts: Record<string, number>;
  /** Fields that take another job's result (`{ from }`), never read here: key → its id. */
  inputs: Record<string, string>;
  files: ReadFile[];
  /** A file named by the job could not be used (already reported). */
  failed: boolean;
}

/** Reads every file the job names, as its kind says what each must be; every problem reported. */
async function readFiles(ctx: RowContext, site: RowSite, draft: JobDraft): Promise<ReadFiles> {
  const read: ReadFiles = { media: {}, facts: {}, inputs: {}, files: [], failed: false };
  const taken = (key: string, value: unknown): boolean => {
    const from = fromOf(value);
    if (from !== undefined) read.inputs[key] = from;
    return from !== undefined;
  };
  // A list field's files are keyed `<field>.<n>`, the order the manifest lists them.
  const named = Object.entries(kindOf(draft.type).files).flatMap(([field, spec]) => {
    const written = draft.fields[field];
    if (Array.isArray(written)) {
      const keyed = written.map((item, n) => ({ field, key: `${field}.${n}`, spec, written: item as unknown }));
      return keyed.flatMap((one) => (taken(one.key, one.written) ? [] : [{ ...one, written: String(one.written) }]));
    }
    if (typeof written === 'string') return [{ field, key: field, spec, written }];
    taken(field, written);
    return [];
  });
  // Most rows of a big source name no file: no promise for each of them.
  if (named.length === 0) return read;
  await Promise.all(
    named.map(async ({ field, key, spec, written }) => {
      const path = resolve(ctx.dir, written);
      if (spec === 'text') {
        const info = fileIssue(site, draft, field, written, await readTextFile(ctx.cache, path));
        read.text = info?.text;
        if (info === undefined) read.failed = true;
        else read.files.push({ path: info.path, stamp: info.stamp });
        return;
      }
      const info = fileIssue(site, draft, field, written, await checkMedia(ctx.cache, path, spec));
      if (info === undefined) {
        read.failed = true;
        return;
      }
      const { stamp, ...media } = info;
      read.media[key] = { ...media, written };
      for (const [param, fact] of Object.entries(spec.facts ?? {})) read.facts[param] = factOf(media, fact) as number;
      read.files.push({ path: info.path, stamp });
    }),
  );
  return read;
}

/**
 * Reads the job's files, hashes its resolved content and names it (its given id, or one derived
 * from the hash). Derived ids and change detection rest on the content hash, so its input keeps
 * one shape for every kind: the parameters (files and text apart), the text, each media file's sha256.
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
  const params: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(draft.fields)) {
    if (value === undefined || field in kind.files) continue;
    const from = fromOf(value);
    if (from !== undefined) files.inputs[field] = from;
    else if (field !== textField) params[field] = value;
  }
  const written = textField === undefined ? undefined : draft.fields[textField];
  const text = files.text ?? (typeof written === 'string' ? written : undefined);
  const textTaken = textField !== undefined && files.inputs[textField] !== undefined;
  const textless = textField !== undefined && text === undefined && !textTaken;
  if (!draft.complete || files.failed || textless) return undefined;
  // What a file showed and its kind prices by is a parameter like any: hashed, keyed, stored.
  Object.assign(params, files.facts);
  const textFile = textField === undefined ? undefined : draft.fields[kind.textFrom?.file ?? ''];
  const inputs = Object.keys(files.inputs).length === 0 ? undefined : files.inputs;
  const hash = contentHash({ type: draft.type, params, text, images: imageHashes(files.media), inputs });
  // After the hash: a bound is the catalogue's, not the job's content (offline a length has none).
  const bound = inputs === undefined ? undefined : boundOf(ctx, site, draft, params, inputs);
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
    textChars: text === undefined ? bound?.textChars : countChars(text),
    textFile: typeof textFile === 'string' ? textFile : undefined,
    media: files.media,
    tags,
    inputs,
    priceBound: bound?.bound === true ? true : undefined,
    position: draft.start,
    fieldPositions: draft.positions,
  };
  return { job, files: files.files };
}

/** A job priced before its inputs exist: its facts at their bound into `params`; a field without one reported. */
function boundOf(
  ctx: RowContext,
  site: RowSite,
  draft: JobDraft,
  params: Record<string, unknown>,
  inputs: Record<string, string>,
): PriceBound {
  const bound = priceBound(draft.type, params, inputs, ctx.models);
  Object.assign(params, bound.facts);
  for (const { field, expected, got, hint } of bound.unbounded) {
    const at = draft.positions[field] ?? draft.start;
    site.issues.push(issueAt(site, at, { field, ...expectedGot(expected, got), hint }));
  }
  return bound;
}

/**
 * A job after the schema and the defaults merge, before its files are read. Not `complete` when a
 * field is missing or unusable: its files are still checked, but it gets no derived id.
 */
interface JobDraft {
  index: number;
  type: JobType;
  givenId?: string | undefined;
  fields: Record<string, unknown>;
  positions: Record<string, FieldPosition>;
  start: SourcePosition;
  complete: boolean;
}

/** Where one row is and what the schema made of it; its problems go in `issues`. */
interface RowSite {
  file: string;
  /** 0-based index of an inline job (messages say job #n); undefined for a source's row. */
  jobIndex?: number | undefined;
  /** Fields of the row the schema rejected (already reported): never merged, never "missing". */
  invalid: ReadonlySet<string>;
  issues: ManifestIssue[];
}

type IssueBody = Omit<ManifestIssue, 'file' | 'line' | 'col'>;

function issueAt(site: RowSite, position: SourcePosition, body: IssueBody): ManifestIssue {
  const jobIndex = site.jobIndex === undefined ? {} : { jobIndex: site.jobIndex };
  return { file: position.file ?? site.file, line: position.line, col: position.col, ...jobIndex, ...body };
}

function missingIssue(context: RowContext, site: RowSite, draft: JobDraft, field: string): ManifestIssue {
  const inDefaults = context.takesDefaults && field in kindOf(draft.type).params;
  const hint = inDefaults ? `set it on the job or in defaults.${draft.type}` : 'set it on the job';
  const expected = fieldSpecFor(draft.type, field)?.expected ?? 'a value';
  const at = { line: draft.start.line, col: draft.start.col };
  return issueAt(site, at, { field, ...expectedGot(expected, 'nothing'), hint });
}

/** A kind whose job gives one of two fields (`text` or `text_file`): exactly one of them. */
function checkExactlyOne(site: RowSite, draft: JobDraft, raw: Record<string, unknown>): void {
  const pair = kindOf(draft.type).exactlyOne;
  if (pair === undefined) return;
  const [first, second] = pair;
  const hasFirst = first in raw;
  if (hasFirst !== second in raw) return;
  const position = hasFirst ? (draft.positions[second] ?? draft.start) : draft.start;
  const body = expectedGot(`${first} or ${second}`, hasFirst ? 'both' : 'neither');
  site.issues.push(issueAt(site, position, { field: hasFirst ? second : first, ...body }));
  draft.complete = false;
}

// A job's own value wins over the default; a value the schema rejected is left out (already reported).
function mergeFields(context: RowContext, site: RowSite, draft: JobDraft, raw: Record<string, unknown>, location: RowLocation): void {
  const block = context.defaults[draft.type];
  for (const name of [...Object.keys(kindOf(draft.type).content), ...Object.keys(kindOf(draft.type).params)]) {
    if (name in raw) {
      if (site.invalid.has(name)) {
        draft.complete = false;
        continue;
      }
      draft.fields[name] = raw[name];
      draft.positions[name] = location.valueAt(name) ?? draft.start;
    } else if (block.written.has(name)) {
      if (!(name in block.values)) draft.complete = false;
      else {
        draft.fields[name] = block.values[name];
        draft.positions[name] = block.positions.get(name) ?? draft.start;
      }
    }
  }
}

/** Merges the defaults under one row and reports missing fields; undefined for a row without a usable type. */
function draftJob(
  context: RowContext,
  site: RowSite,
  index: number,
  raw: Record<string, unknown>,
  location: RowLocation,
): JobDraft | undefined {
  const type = raw['type'];
  if (!isJobType(type) || site.invalid.has('type')) return undefined;
  const draft: JobDraft = { index, type, fields: {}, positions: {}, start: location.start, complete: true };
  if (typeof raw['id'] === 'string') draft.givenId = raw['id'];
  if ('id' in raw && (typeof raw['id'] !== 'string' || site.invalid.has('id'))) draft.complete = false;
  for (const key of ['type', 'id']) {
    const position = location.valueAt(key);
    if (position !== undefined) draft.positions[key] = position;
  }
  mergeFields(context, site, draft, raw, location);
  checkExactlyOne(site, draft, raw);
  for (const field of requiredFor(kindOf(draft.type), draft.fields, site.invalid)) {
    // A field given but rejected by the schema was reported there; "missing" would be a second, wrong message.
    if (draft.fields[field] !== undefined || field in raw || context.defaults[draft.type].written.has(field)) continue;
    site.issues.push(missingIssue(context, site, draft, field));
    draft.complete = false;
  }
  return draft;
}
