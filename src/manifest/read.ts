import type { Model } from '../api/types.js';
import { JOB_TYPES, type ResolvedJob, type SourcePosition } from '../jobs/index.js';
import { checkGraph, type InputRef, type RefSite } from './graph.js';
import { IssueCollector, type ManifestIssue } from './errors.js';
import { newFileCache } from './files.js';
import { type Claimant, duplicateIssue, IdSet } from './ids.js';
import type { Manifest, ManifestUnit } from './open.js';
import { resolveRow, type ReadFile, type RowContext, type RowInput, type RowOutcome } from './rows.js';
import type { Locator } from './schema-issues.js';
import { jobItemSchema } from './schema.js';
import { readCsv } from './sources/csv.js';
import { readFiles } from './sources/files.js';
import { readJsonl } from './sources/jsonl.js';
import { readMatrix } from './sources/matrix.js';
import type { SourceContext, SourceEntry, SourceItem, SourceRow } from './sources/types.js';
import { locateMap, locatePath } from './yaml-source.js';

/** Rows resolved together: their files read concurrently, handed on as one batch. */
export const BATCH_ROWS = 256;
/** Distinct files read at once: enough to overlap I/O, few enough never to run out of descriptors. */
const FILE_CONCURRENCY = 32;

export interface UnitBatch {
  jobs: ResolvedJob[];
  /** Ids given by rows that have problems: still unique across the manifest. */
  claims: Claimant[];
  issues: ManifestIssue[];
  files: ReadFile[];
}

/**
 * A unit's jobs, a batch at a time, in manifest order; `models`: the catalogue to check each job
 * against (undefined: offline). Nothing is kept between batches but a few cached files, so a
 * source of any size reads in bounded memory. Duplicate ids are the ledger's (or checkJobs's) to find.
 */
export async function* readUnit(
  manifest: Manifest,
  unit: ManifestUnit,
  options: { models?: readonly Model[] | undefined } = {},
): AsyncGenerator<UnitBatch> {
  const { reading } = manifest;
  const ctx: RowContext = {
    defaults: reading.defaults,
    takesDefaults: reading.input === undefined,
    dir: reading.scope.folder,
    cache: newFileCache(reading.scope),
    file: manifest.displayPath,
    models: options.models,
    schema: jobItemSchema(),
  };
  if (unit.source === undefined) {
    yield* inBatches(ctx, inlineRows(manifest));
    return;
  }
  const { entry, index } = unit.source;
  const context: SourceContext = {
    manifestFile: manifest.displayPath,
    manifestDir: reading.scope.folder,
    scope: reading.scope,
    locate: (path, target) => locatePath(reading.source, ['sources', index, ...path], target),
    input: reading.input,
  };
  for await (const items of readSourceBatches(entry, context)) {
    const problems = items.flatMap((item) => (item.problem === undefined ? [] : [item.problem]));
    const rows = items.flatMap((item) => (item.row === undefined ? [] : [sourceRow(unit, item.row)]));
    for await (const batch of inBatches(ctx, rows)) yield batch;
    if (problems.length > 0) yield { jobs: [], claims: [], issues: problems.map(({ ordinal: _ordinal, ...issue }) => issue), files: [] };
  }
}

/** Rows of a unit take their manifest order from the unit's place and their own (2^32 rows a unit). */
const UNIT_SPAN = 2 ** 32;

/** The place in `jobs:` of the job at a manifest index (messages call it #n); undefined for a source's row. */
export const inlineIndexOf = (manifestIndex: number): number | undefined =>
  manifestIndex >= 0 && manifestIndex < UNIT_SPAN ? manifestIndex : undefined;

/**
 * A source's row as the same checks as an inline job see it: its fields under `jobs.0` of a root
 * of its own, each located at its cell, line or manifest key (`row.fieldAt`), its file named.
 */
function sourceRow(unit: ManifestUnit, row: SourceRow): RowInput {
  const where = (field: string | undefined): SourcePosition => {
    const at = field === undefined ? row.at : row.fieldAt(field);
    return { file: at.file, line: at.line, col: at.col };
  };
  return {
    index: unit.position * UNIT_SPAN + row.ordinal,
    raw: row.fields,
    site: {
      file: row.at.file,
      root: { jobs: [row.fields] },
      locate: (path) => where(path.length >= 3 ? String(path[2]) : undefined),
      prefix: ['jobs', 0],
    },
    location: {
      start: where(undefined),
      valueAt: (field) => (Object.hasOwn(row.fields, field) ? where(field) : undefined),
    },
  };
}

function* inlineRows(manifest: Manifest): Generator<RowInput> {
  const { source } = manifest.reading;
  const jobs = (source.root as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(jobs)) return;
  const locate: Locator = (path, target) => locatePath(source, path, target);
  for (const [index, raw] of jobs.entries()) {
    const site = { file: manifest.displayPath, root: source.root, locate, prefix: ['jobs', index], jobIndex: index };
    const { start, fields } = locateMap(source, ['jobs', index]);
    yield { index, raw, site, location: { start, valueAt: (field) => fields.get(field)?.value } };
  }
}

async function* inBatches(ctx: RowContext, rows: Iterable<RowInput> | AsyncIterable<RowInput>): AsyncGenerator<UnitBatch> {
  let pending: RowInput[] = [];
  const flush = async (): Promise<UnitBatch> => {
    const outcomes: RowOutcome[] = [];
    for (let start = 0; start < pending.length; start += FILE_CONCURRENCY) {
      outcomes.push(...(await Promise.all(pending.slice(start, start + FILE_CONCURRENCY).map((row) => resolveRow(ctx, row)))));
    }
    pending = [];
    return {
      jobs: outcomes.flatMap((o) => o.jobs),
      claims: outcomes.flatMap((o) => (o.claim === undefined ? [] : [o.claim])),
      issues: outcomes.flatMap((o) => o.issues),
      files: outcomes.flatMap((o) => o.files),
    };
  };
  for await (const row of rows) {
    pending.push(row);
    if (pending.length >= BATCH_ROWS) yield await flush();
  }
  if (pending.length > 0) yield await flush();
}

/**
 * Sources of jobs besides inline `jobs:` (docs/sources.md). The rows of one entry checked by
 * `parseSourceEntry`, in the source's order, in batches as the source has them ready (a chunk of a
 * file, a thousand files or combinations): a promise per batch rather than per row. Each row is
 * the raw fields of one job with where they came from, or a located problem; defaults,
 * validation and ids from content are the caller's, exactly as for inline jobs.
 */
export function readSourceBatches(entry: SourceEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  const read = { csv: readCsv, tsv: readCsv, jsonl: readJsonl, files: readFiles, matrix: readMatrix }[entry.kind];
  return (read as (entry: SourceEntry, context: SourceContext) => AsyncGenerator<SourceItem[]>)(entry, context);
}

const SPLIT_TAG = 0x80;

/** Where a job's input `field` (`images.1` at `images`) is written, as graph.ts places its problems. */
export function inputSite(job: ResolvedJob, field: string, file: string): RefSite {
  const at = job.fieldPositions[field.replace(/\.\d+$/, '')] ?? job.position;
  return {
    file: at.file ?? file,
    line: at.line,
    col: at.col,
    ...(job.inlineIndex === undefined ? {} : { jobIndex: job.inlineIndex }),
    ...('fromDefaults' in at && at.fromDefaults === true ? { fromDefaults: true } : {}),
  };
}

/**
 * Reads every job of an opened manifest a batch at a time, hands each on to `use`, and throws
 * every problem at the end as one ManifestError: the rows', and ids another job already holds
 * (ignoring case; a row with problems, or a split text, still holds its id), and the graph of
 * references (graph.ts). Keeps no job: only the ids, compactly, with their types in a byte each,
 * and the references (a few strings each) until every id is known. `models`: check every job against the catalogue too.
 */
export async function checkJobs(manifest: Manifest, models: readonly Model[] | undefined, use: (job: ResolvedJob) => void): Promise<void> {
  const issues = new IssueCollector();
  issues.addAll(manifest.issues);
  const ids = new IdSet();
  const file = manifest.displayPath;
  // Each id's tag: its job's type (1 + its place in JOB_TYPES) and whether it was split, for the graph.
  const claim = (job: Claimant | ResolvedJob): boolean => {
    const tag = 'type' in job ? JOB_TYPES.indexOf(job.type) + 1 : 0;
    const { line, col } = job.position;
    const held = ids.add(job.id, { file: job.position.file ?? file, line, col }, tag);
    if (held !== undefined) issues.add(duplicateIssue(job, file, held));
    return held === undefined;
  };
  const refs: { ref: Omit<InputRef, 'fromType' | 'fromSplit'>; site: RefSite }[] = [];
  for (const unit of manifest.units) {
    for await (const batch of readUnit(manifest, unit, { models })) {
      issues.addAll(batch.issues);
      batch.claims.forEach(claim);
      for (const job of batch.jobs) {
        if (!claim(job)) continue;
        use(job);
        if (job.parentId !== undefined) ids.addTag(job.parentId, SPLIT_TAG);
        for (const [field, fromId] of Object.entries(job.inputs ?? {})) {
          refs.push({ ref: { jobId: job.id, jobType: job.type, field, fromId }, site: inputSite(job, field, file) });
        }
      }
    }
  }
  // The upstreams' types only now: a job may take the result of one listed after it.
  // An upstream whose own row has problems (no type to tag) is reported there alone.
  const found = refs.flatMap(({ ref, site }) => {
    const tag = ids.tagOf(ref.fromId);
    if (tag === 0) return [];
    const bits = tag ?? 0;
    return [{ ...ref, fromType: JOB_TYPES[(bits & ~SPLIT_TAG) - 1], fromSplit: (bits & SPLIT_TAG) !== 0, site }];
  });
  issues.addAll((await checkGraph(found, (ref) => (ref as (typeof found)[number]).site)).issues);
  const error = issues.error();
  if (error !== undefined) throw error;
}
