import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ResultUrlExpiredError } from '../api/errors.js';
import { withRetries } from '../api/retry.js';
import type { DownloadResult } from '../api/types.js';
import { LocalIoError } from '../errors.js';
import type { RunDeps } from './context.js';
import type { Downstream } from './downstream.js';
import type { FollowedJob } from './follow.js';
import { placeResult } from './place-result.js';
import { resultForms } from './result-forms.js';
import { kindOf } from '../jobs/index.js';
import { describeNonMedia, fileHead, sniffMedia, type FileMedia, type MediaKind } from '../media-type.js';
import { describeError, FatalRunError, idempotentRetries } from './run-errors.js';

const DISK_ERRORS = new Set(['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EDQUOT']);

/**
 * Streams a finished job's result to `<out>/<id>~part`, checks its bytes, then moves it into
 * place as `<id>.<ext>` (never over a file already there: a person's, or the job's earlier result
 * when it is generated again) and records size and sha256.
 * The move comes last so a result's name always holds a complete file; the extension comes from
 * the bytes, as the kind says (an image may be PNG, JPEG or WebP whatever its URL says).
 * A text or an embedding, given in the status (`inline`) or behind the URL, is written as our
 * own files (runner/result-forms.ts), placed the same way.
 * 'expired': the URL answered 403, and a fresh one is to be asked for (runner/follow.ts).
 */
export async function saveResult(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  found: { url: string } | { inline: string },
): Promise<'expired' | undefined> {
  const media = kindOf(job.type).output.media;
  try {
    const mismatch =
      'inline' in found
        ? await placeForms(deps, downstream, job, media, Buffer.from(found.inline))
        : await fetchIntoPlace(deps, downstream, job, media, found.url);
    if (mismatch !== undefined) await leaveUncollected(deps, job, mismatch);
  } catch (error) {
    if (deps.stop.aborted) return undefined;
    if (error instanceof ResultUrlExpiredError) return 'expired';
    if (isDiskError(error)) throw new FatalRunError(diskError(deps, error));
    // Anything else, a refused URL included, leaves a paid result to collect, not a failed job:
    // the service may fix its URLs, a later run may allow larger results.
    await leaveUncollected(deps, job, describeError(error));
  }
  return undefined;
}

/**
 * Returns why the bytes are not a result of this job (an error page, an empty file), leaving
 * nothing behind; undefined once the result is in place and recorded.
 */
async function fetchIntoPlace(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  media: MediaKind,
  url: string,
): Promise<string | undefined> {
  // `~` is never in a job id: no job's result, and no name a person gives a result, is this one.
  const partPath = insideOut(deps.options.outDir, `${job.id}~part`);
  await mkdir(path.dirname(partPath), { recursive: true });
  const result = await withRetries(
    () => deps.client.download(url, partPath, { maxBytes: deps.options.maxResultBytes, signal: deps.stop }),
    idempotentRetries({ ...deps, retry: deps.options.retry }, `download of ${job.id}`),
  );
  if (media === 'text' || media === 'embedding') {
    // Bounded by the download's own limit (--max-result-mb), so reading it whole is safe.
    const raw = await readFile(partPath);
    await rm(partPath, { force: true });
    return placeForms(deps, downstream, job, media, raw);
  }
  const head = await fileHead(partPath);
  const mismatch = resultMismatch(media, head, result.contentType);
  if (mismatch !== undefined) {
    await rm(partPath, { force: true });
    return mismatch;
  }
  const finalPath = outputPathFor(deps.options.outDir, job, url, sniffMedia(head)?.mime);
  await placeAndRecord(deps, downstream, job, partPath, finalPath, result);
  return undefined;
}

/**
 * Writes a text or embedding result as its files, each through `<id>~part` and placed like a
 * download; the recorded file goes last, so a crash between them leaves the job to collect
 * again, and the files already placed are found by their bytes.
 */
async function placeForms(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  media: MediaKind,
  raw: Buffer,
): Promise<string | undefined> {
  if (media !== 'text' && media !== 'embedding') return `the result is not ${media}: the status gave text`;
  const forms = resultForms(media, raw, job.params);
  if ('mismatch' in forms) return forms.mismatch;
  const partPath = insideOut(deps.options.outDir, `${job.id}~part`);
  await mkdir(path.dirname(partPath), { recursive: true });
  const generatedAgain = ((await deps.ledger.getJob(job.id))?.resultPath ?? null) !== null;
  for (const [index, { extension, body }] of forms.files.entries()) {
    await writeFile(partPath, body);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const target = insideOut(deps.options.outDir, `${job.id}.${extension}`);
    if (index === forms.files.length - 1) {
      const recorded = { bytes: body.length, sha256, contentType: undefined };
      await placeAndRecord(deps, downstream, job, partPath, target, recorded);
    } else await placeResult(partPath, target, sha256, { generatedAgain });
  }
  return undefined;
}

/** Moves the checked result to its name (or beside a file that is not ours) and marks the job done. */
async function placeAndRecord(
  deps: RunDeps,
  downstream: Downstream,
  job: FollowedJob,
  partPath: string,
  finalPath: string,
  result: DownloadResult,
): Promise<void> {
  // Only a job generated again (run --redo) is being collected while it holds a result.
  const row = await deps.ledger.getJob(job.id);
  const earlier = row?.resultPath ?? null;
  const placedPath = await placeResult(partPath, finalPath, result.sha256, { generatedAgain: earlier !== null });
  if (earlier === null && placedPath !== finalPath) {
    deps.emit({
      kind: 'warning',
      message: `job "${job.id}": ${finalPath} was not written by mediabatch, so it is kept as it is; the result is saved as ${placedPath}`,
    });
  }
  await deps.ledger.markDone(job.id, { path: placedPath, bytes: result.bytes, sha256: result.sha256 });
  deps.emit({ kind: 'done', id: job.id, path: placedPath, bytes: result.bytes });
  await downstream.done({ id: job.id, parentId: row?.parentId ?? null });
}

/** `<out>/<id>.<ext>`, the extension as the job's kind reads it from the bytes (`mime`), the URL or its parameters. */
export function outputPathFor(outDir: string, job: FollowedJob, url: string, mime?: string): string {
  const extension = kindOf(job.type).output.extension(job, { mime, urlExtension: urlExtension(url) });
  return insideOut(outDir, `${job.id}.${extension}`);
}

/**
 * A file directly in the results folder. Ids are checked by the manifest (letters, digits, `.`,
 * `_`, `-`), and the resolved path is checked again here: nothing is written outside the folder.
 */
function insideOut(outDir: string, name: string): string {
  const root = path.resolve(outDir);
  const target = path.resolve(root, name);
  if (path.dirname(target) !== root) throw new Error(`${JSON.stringify(name)} would be written outside ${root}`);
  return target;
}

function urlExtension(url: string): string | undefined {
  try {
    return path.posix.extname(new URL(url).pathname).slice(1).toLowerCase() || undefined;
  } catch {
    // An unparsable URL is refused by the download itself; the name does not matter.
    return undefined;
  }
}

/** The job stays `submitted` (paid, to be collected) with the reason; every later run tries again. */
export async function leaveUncollected(deps: RunDeps, job: FollowedJob, reason: string): Promise<void> {
  await deps.ledger.noteUncollected(job.id, 'not_collected', reason);
  deps.emit({ kind: 'warning', message: `job "${job.id}": paid result not collected (${reason}); it stays submitted and the next run tries again` });
}

function isDiskError(error: unknown): boolean {
  const failure = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return [failure?.code, failure?.cause?.code].some((code) => typeof code === 'string' && DISK_ERRORS.has(code));
}

function diskError(deps: RunDeps, error: unknown): LocalIoError {
  return new LocalIoError(
    `cannot write results to ${deps.options.outDir}: ${describeError(error)}. Free space or fix permissions (or pass --out DIR), then run the same command again: finished jobs are downloaded then.`,
    'E_OUTPUT',
    error,
  );
}

/**
 * Why the downloaded bytes are not a result of this job's kind, or undefined when they are. The
 * bytes decide; Content-Type only vouches for a binary format this table does not know. A
 * storage error page served with 200 must never be saved, and recorded, as a paid result.
 */
export function resultMismatch(expected: FileMedia, head: Buffer, contentType: string | undefined): string | undefined {
  const media = sniffMedia(head);
  if (media?.kinds.includes(expected)) return undefined;
  const said = contentType === undefined ? '' : `, Content-Type ${contentType.split(';', 1)[0]?.trim()}`;
  if (media !== undefined) return `the result is not ${expected}: its bytes are ${media.name}${said}`;
  const looksLike = describeNonMedia(head);
  if (looksLike !== undefined) return `the result is not ${expected}: its bytes are ${looksLike}${said}`;
  if (contentType?.toLowerCase().trim().startsWith(`${expected}/`)) return undefined;
  return `the result is not ${expected}: its bytes match no known ${expected} format${said}`;
}

