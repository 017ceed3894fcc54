import { isJobType, JOB_TYPES, kindOf, type JobType, type SourcePosition } from '../jobs/index.js';
import type * as z from 'zod';
import { expectedGot, formatGot, type ManifestIssue, closest, quotedList } from './errors.js';
import { fieldSpecFor, jobFieldNames, TOP_LEVEL_EXPECTED, TYPES_TEXT } from './fields.js';
import type { Unsendable } from './schema.js';
import type { PathSegment } from './yaml-source.js';

/** Where the value (or key) at a path from the manifest's root is written. */
export type Locator = (path: readonly PathSegment[], target?: 'key' | 'value') => SourcePosition;

/** The schema's verdict in manifest terms: the issues, and which paths hold an unusable value. */
export interface SchemaCheck {
  issues: ManifestIssue[];
  /** `jobs.3.frames`, `defaults.<kind>.voice`, … — values that must not be merged or used. */
  invalidPaths: Set<string>;
}

interface Where {
  jobIndex?: number;
  type?: JobType | undefined;
  /** The field's name as messages show it (`defaults.<kind>.frames` outside jobs). */
  field?: string;
  /** The field's own name, to look up what it expects. */
  name?: string;
}

export function pathKey(path: readonly PathSegment[]): string {
  return path.join('.');
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PathSegment, unknown>)[segment];
  }
  return value;
}

function describePath(root: unknown, path: readonly PathSegment[], jobIndex?: number): Where {
  const [first, second, third] = path;
  if (first === 'jobs' && typeof second === 'number') {
    const type = (valueAt(root, ['jobs', second, 'type']) as unknown) ?? undefined;
    const name = typeof third === 'string' ? third : undefined;
    const job = jobIndex === undefined ? {} : { jobIndex };
    return { ...job, type: isJobType(type) ? type : undefined, field: name, name };
  }
  if (first === 'defaults' && isJobType(second) && typeof third === 'string') {
    return { type: second, field: `defaults.${second}.${third}`, name: third };
  }
  const field = path.map(String).join('.');
  return field === '' ? {} : { field, name: field };
}

function allowedKeys(root: unknown, path: readonly PathSegment[]): { keys: string[]; contentOf?: JobType } {
  const [first, second] = path;
  if (path.length === 0) return { keys: Object.keys(TOP_LEVEL_EXPECTED) };
  if (first === 'defaults' && path.length === 1) return { keys: [...JOB_TYPES] };
  if (first === 'defaults' && isJobType(second)) return { keys: Object.keys(kindOf(second).params), contentOf: second };
  const type = valueAt(root, [...path, 'type']);
  if (!isJobType(type)) return { keys: [] };
  return { keys: jobFieldNames(type) };
}

function unknownKeyHint(key: string, allowed: { keys: string[]; contentOf?: JobType }): string | undefined {
  if (allowed.contentOf !== undefined && Object.hasOwn(kindOf(allowed.contentOf).content, key)) {
    return `${key} belongs on each job, not in defaults`;
  }
  const near = closest(key, allowed.keys, 1);
  if (near.length > 0) return `did you mean ${quotedList(near)}?`;
  return allowed.keys.length > 0 ? `allowed here: ${allowed.keys.join(', ')}` : undefined;
}

function expectedFor(issue: z.core.$ZodIssue, where: Where, path: readonly PathSegment[], got: unknown): string {
  if (path.length === 0) return 'a mapping with version and jobs';
  if (where.jobIndex !== undefined && where.name === undefined) return 'a mapping with type and the fields of a job';
  if (where.name === 'type') return `one of ${TYPES_TEXT}`;
  if (where.name === 'jobs' && (issue.code === 'too_small' || issue.code === 'custom')) return 'at least one job';
  if (path.length === 2 && path[0] === 'defaults') return `a mapping of ${JOB_TYPES.join(' or ')} fields`;
  const spec = fieldSpecFor(where.type, where.name ?? '');
  if (spec !== undefined) return spec.expected;
  return TOP_LEVEL_EXPECTED[where.name ?? ''] ?? `a valid value (${issue.message}; got ${formatGot(got)})`;
}

function quotedNumberHint(got: unknown, expected: string): string | undefined {
  const numeric = /number/.test(expected) && typeof got === 'string' && got.trim() !== '' && Number.isFinite(Number(got));
  return numeric ? 'write the number without quotes' : undefined;
}

function issueBase(file: string, locate: Locator, where: Where, path: readonly PathSegment[], target: 'key' | 'value') {
  const { line, col, file: at } = locate(path, target);
  const jobIndex = where.jobIndex === undefined ? {} : { jobIndex: where.jobIndex };
  const field = where.field === undefined ? {} : { field: where.field };
  return { file: at ?? file, line, col, message: '', ...jobIndex, ...field };
}

function unknownKeyIssues(
  { file, locate, root, jobIndex }: IssueSite,
  issue: z.core.$ZodIssueUnrecognizedKeys,
  path: PathSegment[],
): ManifestIssue[] {
  const allowed = allowedKeys(root, path);
  return issue.keys.map((key) => {
    const keyPath = [...path, key];
    const base = issueBase(file, locate, describePath(root, keyPath, jobIndex), keyPath, 'key');
    const hint = unknownKeyHint(key, allowed);
    return { ...base, message: 'unknown field', ...(hint === undefined ? {} : { hint }) };
  });
}

/**
 * How issues are placed: `root` is what the paths start from (the manifest, or a source's row as
 * `{ jobs: [row] }`), `prefix` goes before zod's paths (an item checked alone), and `jobIndex` is
 * set for job #N of the manifest's own `jobs:`.
 */
export interface IssueSite {
  file: string;
  root: unknown;
  locate: Locator;
  prefix?: readonly PathSegment[];
  jobIndex?: number | undefined;
}

/**
 * A field that takes a value or `{ from: <id> }` (fields.ts withInputs, the only two-branch unions of
 * a job) failed both: the issues of the branch the value was meant for, a mapping's for `{ from }`.
 */
function branchIssues(site: IssueSite, issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length !== 2) return [issue];
  const path = issue.path.filter((s): s is PathSegment => typeof s !== 'symbol');
  const got = valueAt(site.root, [...(site.prefix ?? []), ...path]);
  const taken = got !== null && typeof got === 'object' && !Array.isArray(got);
  const inside = (inner: z.core.$ZodIssue) => branchIssues(site, { ...inner, path: [...issue.path, ...inner.path] });
  if (!taken) return (issue.errors[0] ?? []).flatMap(inside);
  const unknown = issue.errors[1]?.find((inner) => inner.code === 'unrecognized_keys');
  const keys = unknown?.code === 'unrecognized_keys' ? unknown.keys.map((key) => JSON.stringify(key)).join(', ') : '';
  const detail = keys !== '' ? `${keys} besides from` : 'from' in got ? 'from is not an id' : 'no from';
  const expected = '{ from: <id> } with the id of a job of this manifest';
  const params: Unsendable = { expected, detail, hint: 'write { from: <id> } and nothing else' };
  return [{ code: 'custom', path: issue.path, message: params.expected, params, input: got }];
}

/** Turns zod's issues into positioned manifest issues; one per path, unknown keys one per key. */
export function translateSchemaIssues(site: IssueSite, zodIssues: readonly z.core.$ZodIssue[]): SchemaCheck {
  const { file, root, locate } = site;
  const issues: ManifestIssue[] = [];
  const invalidPaths = new Set<string>();
  for (const zodIssue of zodIssues.flatMap((issue) => branchIssues(site, issue))) {
    const path = [...(site.prefix ?? []), ...zodIssue.path.filter((s): s is PathSegment => typeof s !== 'symbol')];
    if (zodIssue.code === 'unrecognized_keys') {
      issues.push(...unknownKeyIssues(site, zodIssue, path));
      continue;
    }
    const key = pathKey(path);
    if (invalidPaths.has(key)) continue;
    invalidPaths.add(key);
    const where = describePath(root, path, site.jobIndex);
    const got = valueAt(root, path);
    // A text the schema refused to send (schema.ts) says why in its params.
    const unsendable = zodIssue.code === 'custom' ? (zodIssue.params as Unsendable | undefined) : undefined;
    const expected = unsendable?.expected ?? expectedFor(zodIssue, where, path, got);
    const hint = unsendable?.hint ?? quotedNumberHint(got, expected);
    const base = issueBase(file, locate, where, path, 'value');
    const detail = unsendable === undefined ? '' : ` (${unsendable.detail})`;
    const empty = path.length === 0 && (root === null || root === undefined);
    const gotText = empty ? 'an empty file' : formatGot(got) + detail;
    issues.push({ ...base, ...expectedGot(expected, gotText), ...(hint === undefined ? {} : { hint }) });
  }
  return { issues, invalidPaths };
}
