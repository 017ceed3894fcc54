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

export interface DraftContext {
  file: string;
  invalidPaths: Set<string>;
  defaults: Record<JobType, DefaultsBlock>;
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

function missingIssue(context: DraftContext, draft: JobDraft, field: string): ManifestIssue {
  const inDefaults = field in paramsOf(draft.type);
  const hint = inDefaults ? `set it on the job or in defaults.${draft.type}` : 'set it on the job';
  const expected = fieldSpecFor(draft.type, field)?.expected ?? 'a value';
  return { file: context.file, ...draft.start, jobIndex: draft.index, field, ...expectedGot(expected, 'nothing'), hint };
}

/** A kind whose job gives one of two fields (`text` or `text_file`): exactly one of them. */
function checkExactlyOne(context: DraftContext, draft: JobDraft, raw: Record<string, unknown>): void {
  const pair = kindOf(draft.type).exactlyOne;
  if (pair === undefined) return;
  const [first, second] = pair;
  const hasFirst = first in raw;
  if (hasFirst === second in raw) {
    const field = hasFirst ? second : first;
    const position = hasFirst ? (draft.positions[second] ?? draft.start) : draft.start;
    const got = hasFirst ? 'both' : 'neither';
    context.issues.push({ file: context.file, line: position.line, col: position.col, jobIndex: draft.index, field, ...expectedGot(`${first} or ${second}`, got) });
    draft.complete = false;
  }
}

// A job's own value wins over the default; a value the schema rejected is left out (already reported).
function mergeFields(context: DraftContext, draft: JobDraft, raw: Record<string, unknown>, location: MapLocation): void {
  const block = context.defaults[draft.type];
  const names = [...Object.keys(contentOf(draft.type)), ...Object.keys(paramsOf(draft.type))];
  for (const name of names) {
    const own = name in raw;
    if (!own && !block.written.has(name)) continue;
    const invalid = own ? context.invalidPaths.has(pathKey(['jobs', draft.index, name])) : !(name in block.values);
    if (invalid) {
      draft.complete = false;
      continue;
    }
    draft.fields[name] = own ? raw[name] : block.values[name];
    draft.positions[name] = (own ? location.fields.get(name)?.value : block.positions.get(name)) ?? draft.start;
  }
}

/** Merges defaults under one job and reports missing fields; undefined for a job without a usable type. */
export function draftJob(context: DraftContext, index: number, raw: unknown, location: MapLocation): JobDraft | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const record = raw as Record<string, unknown>;
  if (!isJobType(record['type']) || context.invalidPaths.has(pathKey(['jobs', index, 'type']))) return undefined;
  const idValid = typeof record['id'] === 'string' && !context.invalidPaths.has(pathKey(['jobs', index, 'id']));
  const draft: JobDraft = { index, type: record['type'], fields: {}, positions: {}, start: location.start, complete: true };
  if (typeof record['id'] === 'string') draft.givenId = record['id'];
  if ('id' in record && !idValid) draft.complete = false;
  for (const key of ['type', 'id']) {
    const at = location.fields.get(key)?.value;
    if (at !== undefined) draft.positions[key] = at;
  }
  mergeFields(context, draft, record, location);
  checkExactlyOne(context, draft, record);
  for (const field of kindOf(draft.type).required) {
    if (draft.fields[field] !== undefined || hasRejected(context, draft, record, field)) continue;
    context.issues.push(missingIssue(context, draft, field));
    draft.complete = false;
  }
  return draft;
}

// A field given but rejected by the schema was reported there; "missing" would be a second, wrong message.
function hasRejected(context: DraftContext, draft: JobDraft, raw: Record<string, unknown>, field: string): boolean {
  return field in raw || context.defaults[draft.type].written.has(field);
}
