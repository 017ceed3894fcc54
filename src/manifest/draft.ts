import { isJobType, kindOf, type JobType, type FieldPosition, type SourcePosition } from '../jobs/index.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import { fieldSpecFor } from './fields.js';
import { pathKey } from './schema-issues.js';
import type { MapLocation } from './yaml-source.js';

/** One `defaults.<type>` block: usable values, every key written (valid or not), positions. */
export interface DefaultsBlock {
  values: Record<string, unknown>;
  written: Set<string>;
  /** Made once and shared by every job that takes the value. */
  positions: Map<string, FieldPosition>;
}

/**
 * A job after the schema and the defaults merge, before its files are read. Not `complete` when a
 * field is missing or unusable: its files are still checked, but it gets no derived id.
 */
export interface JobDraft {
  index: number;
  type: JobType;
  givenId?: string | undefined;
  fields: Record<string, unknown>;
  positions: Record<string, FieldPosition>;
  start: SourcePosition;
  complete: boolean;
}

/** Where one row is and what the schema made of it; its problems go in `issues`. */
export interface RowSite {
  file: string;
  /** 0-based index of an inline job (messages say job #n); undefined for a source's row. */
  jobIndex?: number | undefined;
  /** Fields of the row the schema rejected (already reported): never merged, never "missing". */
  invalid: ReadonlySet<string>;
  issues: ManifestIssue[];
}

/** What drafting needs of a reading: the defaults, and whether there is a `defaults:` (not stdin). */
export interface DraftContext {
  defaults: Record<JobType, DefaultsBlock>;
  takesDefaults: boolean;
}

/** The usable values of a defaults block: the schema rejected none of them. */
export function defaultsBlock(raw: unknown, type: JobType, location: MapLocation, invalidPaths: Set<string>): DefaultsBlock {
  const values: Record<string, unknown> = {};
  const written = new Set<string>();
  const positions = new Map<string, FieldPosition>();
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      written.add(key);
      if (!(key in kindOf(type).params) || invalidPaths.has(pathKey(['defaults', type, key]))) continue;
      values[key] = value;
      // One object per field, not one per job: V8 gives every `{ ...at, fromDefaults }` clone a
      // hidden class of its own.
      const { line, col } = location.fields.get(key)?.value ?? location.start;
      positions.set(key, { line, col, fromDefaults: true });
    }
  }
  return { values, written, positions };
}

type IssueBody = Omit<ManifestIssue, 'file' | 'line' | 'col'>;

export function issueAt(site: RowSite, position: SourcePosition, body: IssueBody): ManifestIssue {
  const jobIndex = site.jobIndex === undefined ? {} : { jobIndex: site.jobIndex };
  return { file: position.file ?? site.file, line: position.line, col: position.col, ...jobIndex, ...body };
}

function missingIssue(context: DraftContext, site: RowSite, draft: JobDraft, field: string): ManifestIssue {
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
function mergeFields(context: DraftContext, site: RowSite, draft: JobDraft, raw: Record<string, unknown>, location: MapLocation): void {
  const block = context.defaults[draft.type];
  for (const name of [...Object.keys(kindOf(draft.type).content), ...Object.keys(kindOf(draft.type).params)]) {
    if (name in raw) {
      if (site.invalid.has(name)) {
        draft.complete = false;
        continue;
      }
      draft.fields[name] = raw[name];
      draft.positions[name] = location.fields.get(name)?.value ?? draft.start;
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
export function draftJob(
  context: DraftContext,
  site: RowSite,
  index: number,
  raw: Record<string, unknown>,
  location: MapLocation,
): JobDraft | undefined {
  const type = raw['type'];
  if (!isJobType(type) || site.invalid.has('type')) return undefined;
  const draft: JobDraft = { index, type, fields: {}, positions: {}, start: location.start, complete: true };
  if (typeof raw['id'] === 'string') draft.givenId = raw['id'];
  if ('id' in raw && (typeof raw['id'] !== 'string' || site.invalid.has('id'))) draft.complete = false;
  for (const key of ['type', 'id']) {
    const position = location.fields.get(key)?.value;
    if (position !== undefined) draft.positions[key] = position;
  }
  mergeFields(context, site, draft, raw, location);
  checkExactlyOne(site, draft, raw);
  for (const field of kindOf(draft.type).required) {
    // A field given but rejected by the schema was reported there; "missing" would be a second, wrong message.
    if (draft.fields[field] !== undefined || field in raw || context.defaults[draft.type].written.has(field)) continue;
    site.issues.push(missingIssue(context, site, draft, field));
    draft.complete = false;
  }
  return draft;
}
