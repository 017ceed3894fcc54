import { isJobType, kindOf, type JobType } from '../jobs/index.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import { contentOf, fieldSpecFor, paramsOf } from './fields.js';
import { pathKey } from './schema-issues.js';
import type { FieldPosition, SourcePosition } from './types.js';
import type { MapLocation } from './yaml-source.js';

/** One `defaults.<type>` block: usable values, every key written (valid or not), positions. */
export interface DefaultsBlock {
  values: Record<string, unknown>;
  written: Set<string>;
  /** Where each usable value sits, made once and shared by every job that takes it. */
  positions: Map<string, FieldPosition>;
}

/**
 * A job after the schema and the defaults merge, before its files are read. `complete` is false
 * when a field is missing or unusable: such a job is still checked for file problems, but gets
 * no derived id.
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

/** What every row of a manifest shares: the defaults blocks. */
export interface DraftContext {
  defaults: Record<JobType, DefaultsBlock>;
  /** False for jobs read from stdin: there is no `defaults:` to point a person at. */
  takesDefaults: boolean;
}

/**
 * Where one row (an inline job, or a source's row) is, and what the schema made of it: the file
 * its positions are in, the inline job's index for messages, the fields the schema rejected,
 * the fields its source entry gives every row, and where its problems go.
 */
export interface RowSite {
  file: string;
  /** 0-based index of an inline job (messages say job #n); undefined for a source's row. */
  jobIndex?: number | undefined;
  /** Fields of the row the schema rejected (already reported): never merged, never "missing". */
  invalid: ReadonlySet<string>;
  /** Fields the row's source entry sets for every row: under the row's own, over defaults. */
  entry?: DefaultsBlock | undefined;
  issues: ManifestIssue[];
}

/** The usable values of a defaults block: the schema rejected none of them. */
export function defaultsBlock(raw: unknown, type: JobType, location: MapLocation, invalidPaths: Set<string>): DefaultsBlock {
  const values: Record<string, unknown> = {};
  const written = new Set<string>();
  const positions = new Map<string, FieldPosition>();
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      written.add(key);
      if (!(key in paramsOf(type)) || invalidPaths.has(pathKey(['defaults', type, key]))) continue;
      values[key] = value;
      // One object per field, not one per job: a copy per job was 5 objects a job, each with a
      // hidden class of its own (V8 gives every `{ ...at, fromDefaults }` clone a new one), ~14 MB.
      const { line, col } = location.fields.get(key)?.value ?? location.start;
      positions.set(key, { line, col, fromDefaults: true });
    }
  }
  return { values, written, positions };
}

function missingIssue(context: DraftContext, site: RowSite, draft: JobDraft, field: string): ManifestIssue {
  const inDefaults = context.takesDefaults && field in paramsOf(draft.type);
  const hint = inDefaults ? `set it on the job or in defaults.${draft.type}` : 'set it on the job';
  const expected = fieldSpecFor(draft.type, field)?.expected ?? 'a value';
  return { file: site.file, ...at(draft.start), ...label(site), field, ...expectedGot(expected, 'nothing'), hint };
}

function label(site: RowSite): { jobIndex?: number } {
  return site.jobIndex === undefined ? {} : { jobIndex: site.jobIndex };
}

function at(position: SourcePosition): { line: number; col: number } {
  return { line: position.line, col: position.col };
}

/** A kind whose job gives one of two fields (`text` or `text_file`): exactly one of them. */
function checkExactlyOne(site: RowSite, draft: JobDraft, given: (field: string) => boolean): void {
  const pair = kindOf(draft.type).exactlyOne;
  if (pair === undefined) return;
  const [first, second] = pair;
  const hasFirst = given(first);
  if (hasFirst === given(second)) {
    const field = hasFirst ? second : first;
    const position = hasFirst ? (draft.positions[second] ?? draft.start) : draft.start;
    const got = hasFirst ? 'both' : 'neither';
    site.issues.push({ file: position.file ?? site.file, ...at(position), ...label(site), field, ...expectedGot(`${first} or ${second}`, got) });
    draft.complete = false;
  }
}

// A job's own value wins over its source entry's, which wins over the default; a value the schema
// rejected is left out (already reported).
function mergeFields(context: DraftContext, site: RowSite, draft: JobDraft, raw: Record<string, unknown>, location: MapLocation): void {
  const blocks = [site.entry, context.defaults[draft.type]].filter((b): b is DefaultsBlock => b !== undefined);
  const names = [...Object.keys(contentOf(draft.type)), ...Object.keys(paramsOf(draft.type))];
  for (const name of names) {
    if (name in raw) {
      if (site.invalid.has(name)) {
        draft.complete = false;
        continue;
      }
      draft.fields[name] = raw[name];
      draft.positions[name] = location.fields.get(name)?.value ?? draft.start;
      continue;
    }
    const block = blocks.find((candidate) => candidate.written.has(name));
    if (block === undefined) continue;
    if (!(name in block.values)) {
      draft.complete = false;
      continue;
    }
    draft.fields[name] = block.values[name];
    draft.positions[name] = block.positions.get(name) ?? draft.start;
  }
}

/**
 * Merges the source entry's fields and the defaults under one row and reports missing fields;
 * undefined for a row without a usable type. `type` is the row's own, or its source's.
 */
export function draftJob(context: DraftContext, site: RowSite, index: number, raw: Record<string, unknown>, type: unknown, location: MapLocation): JobDraft | undefined {
  if (!isJobType(type) || site.invalid.has('type')) return undefined;
  const idValid = typeof raw['id'] === 'string' && !site.invalid.has('id');
  const draft: JobDraft = { index, type, fields: {}, positions: {}, start: location.start, complete: true };
  if (typeof raw['id'] === 'string') draft.givenId = raw['id'];
  if ('id' in raw && !idValid) draft.complete = false;
  for (const key of ['type', 'id']) {
    const position = location.fields.get(key)?.value;
    if (position !== undefined) draft.positions[key] = position;
  }
  mergeFields(context, site, draft, raw, location);
  const given = (field: string): boolean => field in raw || site.entry?.written.has(field) === true;
  checkExactlyOne(site, draft, given);
  for (const field of kindOf(draft.type).required) {
    if (draft.fields[field] !== undefined || hasRejected(context, site, draft, raw, field)) continue;
    site.issues.push(missingIssue(context, site, draft, field));
    draft.complete = false;
  }
  return draft;
}

// A field given but rejected by the schema was reported there; "missing" would be a second, wrong message.
function hasRejected(context: DraftContext, site: RowSite, draft: JobDraft, raw: Record<string, unknown>, field: string): boolean {
  return field in raw || site.entry?.written.has(field) === true || context.defaults[draft.type].written.has(field);
}
