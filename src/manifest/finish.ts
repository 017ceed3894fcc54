import { resolve } from 'node:path';
import { kindOf, type ImageRef, type ResolvedJob } from '../jobs/index.js';
import { countChars, contentHash } from './content-hash.js';
import type { JobDraft, RowSite } from './draft.js';
import { expectedGot, type ManifestIssue } from './errors.js';
import { checkImage, type FileCache, type FileCheck, readTextFile } from './files.js';
import { idOf } from './ids.js';

export interface FinishContext {
  /** The manifest's folder: relative paths in it are resolved against this. */
  dir: string;
  cache: FileCache;
}

/** A file a job's content was read from, with its stamp: what tells a later reading it changed. */
export interface ReadFile {
  path: string;
  stamp: string;
}

function fileIssue<T>(site: RowSite, draft: JobDraft, field: string, written: string, check: FileCheck<T>): T | undefined {
  if (check.ok) return check.value;
  const at = draft.positions[field] ?? draft.start;
  const issue: ManifestIssue = {
    file: at.file ?? site.file,
    line: at.line,
    col: at.col,
    ...(site.jobIndex === undefined ? {} : { jobIndex: site.jobIndex }),
    field,
    ...expectedGot(check.expected, `${JSON.stringify(written)} (${check.detail})`),
  };
  if (check.hint !== undefined) issue.hint = check.hint;
  site.issues.push(issue);
  return undefined;
}

interface ReadFiles {
  /** The text a text file gave (`text_file`), if the kind has one and it could be read. */
  text?: string | undefined;
  images: Record<string, ImageRef>;
  files: ReadFile[];
  /** A file named by the job could not be used (already reported). */
  failed: boolean;
}

/** Reads every file the job names, as its kind says what each must be; every problem reported. */
async function readFiles(context: FinishContext, site: RowSite, draft: JobDraft): Promise<ReadFiles> {
  const read: ReadFiles = { images: {}, files: [], failed: false };
  const named = Object.entries(kindOf(draft.type).files).flatMap(([field, sort]) => {
    const written = draft.fields[field];
    return typeof written === 'string' ? [{ field, sort, written }] : [];
  });
  // Most rows of a big source name no file: no promise for each of them.
  if (named.length === 0) return read;
  await Promise.all(
    named.map(async ({ field, sort, written }) => {
      const path = resolve(context.dir, written);
      if (sort === 'text') {
        const info = fileIssue(site, draft, field, written, await readTextFile(context.cache, path));
        read.text = info?.text;
        if (info === undefined) read.failed = true;
        else read.files.push({ path: info.path, stamp: info.stamp });
        return;
      }
      const info = fileIssue(site, draft, field, written, await checkImage(context.cache, path));
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
 * Reads the job's files (reporting every problem with them), hashes its resolved content and
 * names it (its given id, or one derived from the hash). The content hash is what derived ids
 * and change detection rest on, so its input keeps one shape for every kind: the parameters
 * (files and text apart), the text, each image's sha256.
 */
export async function finishJob(
  context: FinishContext,
  site: RowSite,
  draft: JobDraft,
  tags: readonly string[] | undefined,
): Promise<{ job: ResolvedJob; files: ReadFile[] } | undefined> {
  const kind = kindOf(draft.type);
  const files = await readFiles(context, site, draft);
  const textField = kind.textFrom?.field;
  const text = files.text ?? (textField === undefined ? undefined : (draft.fields[textField] as string | undefined));
  if (!draft.complete || files.failed || (textField !== undefined && text === undefined)) return undefined;
  const params: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(draft.fields)) {
    if (value !== undefined && field !== textField && !(field in kind.files)) params[field] = value;
  }
  const imageHashes = Object.fromEntries(Object.entries(files.images).map(([field, ref]) => [field, ref.sha256]));
  const images = Object.keys(imageHashes).length === 0 ? undefined : imageHashes;
  const textFile = textField === undefined ? undefined : draft.fields[kind.textFrom?.file ?? ''];
  const hash = contentHash({ type: draft.type, params, text, images });
  const { id, idDerived } = idOf(draft.givenId, { type: draft.type, contentHash: hash });
  // Every field named, none spread: a literal that starts with a spread is built in V8's slow
  // dictionary mode, and each of a million jobs is read field by field on its way to the ledger.
  const job: ResolvedJob = {
    id,
    idDerived,
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

export type { ResolvedJob };
