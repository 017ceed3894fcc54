import type { JobType } from '../jobs/types.js';
import { dirname, resolve } from 'node:path';
import { type DraftContext, defaultsBlock, draftJob, type JobDraft } from './draft.js';
import { ManifestError, type ManifestIssue } from './errors.js';
import { JOB_TYPES } from '../jobs/index.js';
import { fileScope } from './file-scope.js';
import { newFileCache } from './files.js';
import { type FinishContext, finishJob } from './finish.js';
import { assignIds, type JobEntry } from './ids.js';
import { readManifestText } from './manifest-file.js';
import { manifestSchema } from './schema.js';
import { translateSchemaIssues } from './schema-issues.js';
import { checkSentTexts } from './text-checks.js';
import type { Manifest } from './types.js';
import { defaultsNode, jobNodes, locateMap, type ManifestSource, parseManifestSource } from './yaml-source.js';

// Distinct files read at once: enough to overlap I/O, few enough never to run out of descriptors.
const FILE_CONCURRENCY = 32;

function draftAll(source: ManifestSource, root: unknown, context: DraftContext): (JobDraft | undefined)[] {
  const rawJobs = (root as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(rawJobs)) return [];
  const nodes = jobNodes(source);
  const fallback = { line: 1, col: 1 };
  return rawJobs.map((raw, index) => draftJob(context, index, raw, locateMap(nodes[index], fallback)));
}

async function finishAll(context: FinishContext, drafts: readonly (JobDraft | undefined)[]): Promise<JobEntry[]> {
  const entries: JobEntry[] = [];
  // In chunks: thousands of distinct text files opened at once would exhaust file descriptors.
  for (let start = 0; start < drafts.length; start += FILE_CONCURRENCY) {
    const chunk = drafts.slice(start, start + FILE_CONCURRENCY);
    const jobs = await Promise.all(chunk.map((draft) => (draft === undefined ? undefined : finishJob(context, draft))));
    chunk.forEach((draft, i) => entries.push({ draft, job: jobs[i] }));
  }
  return entries;
}

function defaultsBlocks(source: ManifestSource, root: unknown, invalidPaths: Set<string>): DraftContext['defaults'] {
  const rawDefaults = (root as { defaults?: Record<string, unknown> } | null)?.defaults;
  const block = (type: JobType) => {
    const location = locateMap(defaultsNode(source, type), { line: 1, col: 1 });
    return defaultsBlock(rawDefaults?.[type], type, location, invalidPaths);
  };
  return Object.fromEntries(JOB_TYPES.map((type) => [type, block(type)])) as DraftContext['defaults'];
}

function labelled(issues: readonly ManifestIssue[], labels: Map<number, string>): ManifestIssue[] {
  return issues.map((issue) => {
    const id = issue.jobIndex === undefined ? undefined : labels.get(issue.jobIndex);
    return id === undefined ? issue : { ...issue, jobId: id };
  });
}

export interface LoadOptions {
  /** Let text_file and image paths point outside the manifest's folder (`--allow-outside-files`). */
  allowOutsideFiles?: boolean | undefined;
}

/**
 * Reads, validates and resolves a manifest: defaults merged, files checked (and kept inside the
 * manifest's folder unless `allowOutsideFiles`), ids given or derived.
 * Throws ManifestError with every problem found (sorted by position), or UsageError when the
 * file itself cannot be read. Paths in messages are `path` as given.
 */
export async function loadManifest(path: string, options: LoadOptions = {}): Promise<Manifest> {
  const absolute = resolve(path);
  const source = parseManifestSource(await readManifestText(path, absolute), path);
  const root = source.root;
  const parsed = manifestSchema().safeParse(root);
  const schema = translateSchemaIssues(path, source, root, parsed.success ? [] : parsed.error.issues);
  checkSentTexts(path, source, root, schema);
  const issues = schema.issues;
  const draftContext: DraftContext = { file: path, invalidPaths: schema.invalidPaths, defaults: defaultsBlocks(source, root, schema.invalidPaths), issues };
  const drafts = draftAll(source, root, draftContext);
  const scope = await fileScope(dirname(absolute), options.allowOutsideFiles === true);
  const entries = await finishAll({ file: path, dir: scope.folder, cache: newFileCache(scope), issues }, drafts);
  const { jobs, labels } = assignIds(path, entries, issues);
  if (issues.length > 0) throw new ManifestError(labelled(issues, labels));
  const budget = (root as { budget?: number }).budget;
  return { path: absolute, displayPath: path, ...(budget === undefined ? {} : { budgetUsd: budget }), jobs };
}
