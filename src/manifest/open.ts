import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { JOB_TYPES, kindOf, type FieldPosition, type JobType } from '../jobs/index.js';
import type { ManifestIssue } from './errors.js';
import { fileScope, type FileScope } from './files.js';
import { type Locator, pathKey, translateSchemaIssues } from './schema-issues.js';
import { headerSchema } from './schema.js';
import { parseSourceEntry } from './sources/entry.js';
import type { SourceEntry } from './sources/types.js';
import { locateMap, locatePath, parseManifestSource, readManifestText } from './yaml-source.js';
import type { ManifestSource, MapLocation } from './yaml-source.js';

/** One `defaults.<type>` block: usable values, every key written (valid or not), positions. */
export interface DefaultsBlock {
  values: Record<string, unknown>;
  written: Set<string>;
  /** Made once and shared by every job that takes the value. */
  positions: Map<string, FieldPosition>;
}

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
  reading: {
    source: ManifestSource;
    defaults: Record<JobType, DefaultsBlock>;
    scope: FileScope;
    /** Where a JSON Lines source named `-` reads from instead of a file (stdin). */
    input?: Readable | undefined;
  };
}

/** Where a manifest's jobs come from: its inline `jobs:` list, or one entry of `sources:` (`index` 0-based). */
export interface ManifestUnit {
  /** Stable while the manifest does not change what the unit is: the ledger keys its jobs by it. */
  key: string;
  /** 0 for the inline jobs, then 1, 2, … for sources in the order they are written. */
  position: number;
  source?: { entry: SourceEntry; index: number } | undefined;
}

export interface LoadOptions {
  /** Let text_file and image paths point outside the manifest's folder (`--allow-outside-files`). */
  allowOutsideFiles?: boolean | undefined;
  /** For the manifest `-`: the stream its JSON Lines come from (stdin), and how messages name it (`<stdin>`). */
  input?: Readable | undefined;
  inputName?: string | undefined;
  /** A manifest given as a value (the library's in-memory object) instead of YAML: `path` then only names it. */
  root?: unknown;
}

/** The manifest `-`: jobs as JSON Lines on stdin, one job object a line, `type` on each. */
export const STDIN_MANIFEST = '-';
/** How messages name stdin: `<stdin>:12`. */
const STDIN_NAME = '<stdin>';

/**
 * Reads a manifest's YAML and checks what surrounds its jobs: the problems go in `issues`, to be
 * reported with the jobs' own, all at once. Throws ManifestError only when the YAML cannot be read
 * at all, UsageError when the file cannot be opened. The manifest `-` is one JSON Lines source read
 * from `options.input`: no YAML, no defaults (each line is a whole job), files named by a line
 * relative to the current folder.
 */
export async function openManifest(path: string, options: LoadOptions = {}): Promise<Manifest> {
  const stdin = path === STDIN_MANIFEST;
  if (stdin && options.input === undefined) throw new Error('bug in mediabatch: the manifest - needs a stream to read');
  const absolute = resolve(path);
  const inputName = options.inputName ?? STDIN_NAME;
  const displayPath = stdin ? inputName : path;
  const source: ManifestSource = stdin
    ? { root: { version: 1, sources: [{ jsonl: inputName }] }, index: undefined }
    : options.root !== undefined
      ? { root: options.root, index: undefined }
      : parseManifestSource(await readManifestText(path, absolute), path);
  const { root } = source;
  const parsed = headerSchema().safeParse(root);
  const locate: Locator = (path, target) => locatePath(source, path, target);
  const check = translateSchemaIssues({ file: displayPath, root, locate }, parsed.success ? [] : parsed.error.issues);
  const { budget, jobs, defaults, sources } = (root ?? {}) as Record<string, unknown>;
  const units: ManifestUnit[] = Array.isArray(jobs) ? [{ key: 'jobs', position: 0 }] : [];
  const issues = check.issues;
  (Array.isArray(sources) ? sources : []).forEach((item: unknown, index) => {
    const at: Locator = (path, target) => locatePath(source, ['sources', index, ...path], target);
    const { entry, problems } = parseSourceEntry(item, { manifestFile: displayPath, locate: at });
    issues.push(...problems);
    if (entry !== undefined) units.push({ key: `source:${index + 1}`, position: index + 1, source: { entry, index } });
  });
  const block = (type: JobType) => {
    const raw = (defaults as Record<string, unknown> | undefined)?.[type];
    return defaultsBlock(raw, type, locateMap(source, ['defaults', type]), check.invalidPaths);
  };
  return {
    path: absolute,
    displayPath,
    ...(typeof budget === 'number' && !check.invalidPaths.has('budget') ? { budgetUsd: budget } : {}),
    units,
    issues,
    reading: {
      source,
      defaults: Object.fromEntries(JOB_TYPES.map((type) => [type, block(type)])) as Record<JobType, DefaultsBlock>,
      scope: await fileScope(stdin ? process.cwd() : dirname(absolute), options.allowOutsideFiles === true),
      ...(stdin ? { input: options.input } : {}),
    },
  };
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
