import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { JOB_TYPES, type JobType } from '../jobs/index.js';
import { defaultsBlock, type DefaultsBlock } from './draft.js';
import { fileScope, type FileScope } from './files.js';
import { readManifestText, locateMap, locatePath, parseManifestSource, type ManifestSource } from './yaml-source.js';
import { headerSchema } from './schema.js';
import { type Locator, translateSchemaIssues, type SchemaCheck } from './schema-issues.js';
import type { ManifestIssue } from './errors.js';
import { parseSourceEntry } from './sources/entry.js';
import type { SourceEntry } from './sources/types.js';

/** A manifest as it was opened; its jobs are read unit by unit (manifest/read.ts), never all held at once. */
export interface Manifest {
  /** Absolute; `displayPath` is as the user gave it, for messages. */
  path: string;
  displayPath: string;
  budgetUsd?: number | undefined;
  /** In manifest order: the inline `jobs:`, then each of `sources:`. */
  units: ManifestUnit[];
  /** Problems found when it was opened (top level, defaults, sources): reported with its jobs'. */
  issues: ManifestIssue[];
  reading: ManifestReading;
}

/** Where a manifest's jobs come from: its inline `jobs:` list, or one entry of `sources:`. */
export interface ManifestUnit {
  /** Stable while the manifest does not change what the unit is: the ledger keys its jobs by it. */
  key: string;
  /** 0 for the inline jobs, then 1, 2, … for sources in the order they are written. */
  position: number;
  kind: 'jobs' | 'csv' | 'tsv' | 'jsonl' | 'files' | 'matrix';
  /** How messages name it: `jobs:`, `csv chapters.csv`. */
  label: string;
  /** `index`: 0-based in `sources:`. */
  source?: { entry: SourceEntry; index: number } | undefined;
}

export interface ManifestReading {
  source: ManifestSource;
  defaults: Record<JobType, DefaultsBlock>;
  scope: FileScope;
  /** Where a JSON Lines source named `-` reads from instead of a file (stdin). */
  input?: Readable | undefined;
}

export interface LoadOptions {
  /** Let text_file and image paths point outside the manifest's folder (`--allow-outside-files`). */
  allowOutsideFiles?: boolean | undefined;
  /** For the manifest `-`: the stream its JSON Lines come from (stdin). */
  input?: Readable | undefined;
}

/** The manifest `-`: jobs as JSON Lines on stdin, one job object a line, `type` on each. */
export const STDIN_MANIFEST = '-';
/** The inline jobs come first: position 0. */
const INLINE_UNIT: ManifestUnit = { key: 'jobs', position: 0, kind: 'jobs', label: 'jobs:' };
/** How messages name stdin: `<stdin>:12`. */
const STDIN_NAME = '<stdin>';

/**
 * Reads a manifest's YAML and checks what surrounds its jobs: the problems go in `issues`, to be
 * reported with the jobs' own, all at once. Throws ManifestError only when the YAML cannot be read
 * at all, UsageError when the file cannot be opened.
 */
export async function openManifest(path: string, options: LoadOptions = {}): Promise<Manifest> {
  if (path === STDIN_MANIFEST) return stdinManifest(options);
  const absolute = resolve(path);
  const source = parseManifestSource(await readManifestText(path, absolute), path);
  const root = source.root;
  const parsed = headerSchema().safeParse(root);
  const locate: Locator = (path, target) => locatePath(source, path, target);
  const check = translateSchemaIssues({ file: path, root, locate }, parsed.success ? [] : parsed.error.issues);
  const { budget, jobs } = (root ?? {}) as { budget?: unknown; jobs?: unknown };
  const { units: sourceUnits, problems: sourceProblems } = sourceEntries(path, source, root);
  const scope = await fileScope(dirname(absolute), options.allowOutsideFiles === true);
  return {
    path: absolute,
    displayPath: path,
    ...(typeof budget === 'number' && !check.invalidPaths.has('budget') ? { budgetUsd: budget } : {}),
    units: Array.isArray(jobs) ? [INLINE_UNIT, ...sourceUnits] : sourceUnits,
    issues: [...check.issues, ...sourceProblems],
    reading: { source, defaults: defaultsBlocks(source, root, check), scope },
  };
}

function defaultsBlocks(source: ManifestSource, root: unknown, check: SchemaCheck): Record<JobType, DefaultsBlock> {
  const rawDefaults = (root as { defaults?: Record<string, unknown> } | null)?.defaults;
  const block = (type: JobType) => {
    return defaultsBlock(rawDefaults?.[type], type, locateMap(source, ['defaults', type]), check.invalidPaths);
  };
  return Object.fromEntries(JOB_TYPES.map((type) => [type, block(type)])) as Record<JobType, DefaultsBlock>;
}

/** Each entry of `sources:` checked once: a unit for each good one, the problems of the others. */
function sourceEntries(file: string, source: ManifestSource, root: unknown): { units: ManifestUnit[]; problems: ManifestIssue[] } {
  const raw = (root as { sources?: unknown } | null)?.sources;
  const units: ManifestUnit[] = [];
  const problems: ManifestIssue[] = [];
  if (!Array.isArray(raw)) return { units, problems };
  raw.forEach((item: unknown, index) => {
    const locate = (path: readonly (string | number)[], target?: 'key' | 'value') => locatePath(source, ['sources', index, ...path], target);
    const parsed = parseSourceEntry(item, { manifestFile: file, locate });
    problems.push(...parsed.problems);
    if (parsed.entry === undefined) return;
    const { entry } = parsed;
    const what = entry.kind === 'files' ? entry.glob : entry.kind === 'matrix' ? entry.lists.map((l) => l.field).join(' × ') : entry.file;
    units.push({ key: `source:${index + 1}`, position: index + 1, kind: entry.kind, label: `sources[${index + 1}] ${entry.kind} ${what}`, source: { entry, index } });
  });
  return { units, problems };
}

/**
 * A manifest with one source, JSON Lines read from `options.input`: no YAML, no defaults (each
 * line is a whole job), files named by a line relative to the current folder. Its unit is never
 * kept from an earlier reading: a stream cannot be fingerprinted before it is read.
 */
async function stdinManifest(options: LoadOptions): Promise<Manifest> {
  if (options.input === undefined) throw new Error('bug in mediabatch: the manifest - needs a stream to read');
  const entry = { kind: 'jsonl' as const, file: STDIN_NAME, columns: {}, fields: {} };
  const root = { version: 1, sources: [{ jsonl: STDIN_NAME }] };
  const source: ManifestSource = { root, index: undefined };
  const scope = await fileScope(process.cwd(), options.allowOutsideFiles === true);
  return {
    path: resolve(STDIN_MANIFEST),
    displayPath: STDIN_NAME,
    units: [{ key: 'source:1', position: 1, kind: 'jsonl', label: `JSON Lines from ${STDIN_NAME}`, source: { entry, index: 0 } }],
    issues: [],
    reading: { source, defaults: defaultsBlocks(source, root, { issues: [], invalidPaths: new Set() }), scope, input: options.input },
  };
}
