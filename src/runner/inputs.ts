import { createHash } from 'node:crypto';
import type { Model } from '../api/types.js';
import { factOf, kindOf, type MediaRef, type SendableJob } from '../jobs/index.js';
import { modelOf } from '../manifest/catalogue.js';
import { countChars } from '../manifest/content-hash.js';
import { checkMedia, fileScope, newFileCache, readTextFile, type FileCache } from '../manifest/files.js';
import type { JobRow } from '../store/index.js';

/** What a dependent's inputs are read from: its upstream's row as the ledger has it now. */
export type UpstreamOf = (id: string) => Promise<Pick<JobRow, 'state' | 'resultPath' | 'resultSha256'> | undefined>;

/** The job with its inputs in place, or why it cannot be sent. */
export type Materialised = { job: SendableJob } | { blocked: string };

/**
 * Puts a dependent's inputs in place, from its upstreams' results on disk: a media file checked
 * by its bytes as the manifest checks a file for that field (format, size, duration) and its
 * facts priced by (into the parameters, over the bound the job was priced at); a text as the
 * field's value (a speech job's text). Each must still be the file its upstream was recorded
 * with: the sha256 the ledger holds (and records as sent with the reservation). `models`: the
 * catalogue, for a text's length.
 */
export async function materialise(
  job: SendableJob,
  inputs: Readonly<Record<string, string>>,
  parts: { upstreamOf: UpstreamOf; outDir: string; models?: readonly Model[] | undefined },
): Promise<Materialised> {
  const kind = kindOf(job.type);
  const params: Record<string, unknown> = { ...job.params };
  const media: Record<string, MediaRef> = { ...job.media };
  let { text, textChars } = job;
  // Results are mediabatch's own files: the manifest's folder does not confine them.
  const cache = newFileCache(await fileScope(parts.outDir, true));
  for (const [field, fromId] of Object.entries(inputs)) {
    const upstream = await parts.upstreamOf(fromId);
    const path = upstream?.resultPath ?? null;
    const sha256 = upstream?.resultSha256 ?? null;
    const from = `input "${field}" from "${fromId}"`;
    if (upstream?.state !== 'done' || path === null || sha256 === null) return { blocked: `${from}: it is not done` };
    const spec = kind.files[field.split('.')[0] ?? field];
    const read = typeof spec === 'object' ? await mediaInput(cache, path, spec) : await textInput(cache, path);
    if ('problem' in read) return { blocked: `${from} does not fit: ${read.problem}` };
    if (read.sha256 !== sha256) return { blocked: `${from}: ${path} changed since it was downloaded` };
    if ('ref' in read) {
      media[field] = read.ref;
      for (const [param, fact] of Object.entries(typeof spec === 'object' ? (spec.facts ?? {}) : {})) params[param] = factOf(read.ref, fact);
    } else if (kind.textFrom?.field === field) {
      [text, textChars] = [read.text, countChars(read.text)];
    } else params[field] = read.text;
  }
  const tooLong = textTooLong(job, textChars, parts.models);
  if (tooLong !== undefined) return { blocked: tooLong };
  return { job: { ...job, params, media, text, textChars } };
}

type Read = ({ ref: MediaRef } | { text: string }) & { sha256: string };

async function mediaInput(cache: FileCache, path: string, spec: Parameters<typeof checkMedia>[2]): Promise<Read | { problem: string }> {
  const check = await checkMedia(cache, path, spec);
  if (!check.ok) return { problem: `expected ${check.expected}, got ${check.detail}` };
  const { stamp: _stamp, ...found } = check.value;
  return { ref: { ...found, written: path }, sha256: found.sha256 };
}

async function textInput(cache: FileCache, path: string): Promise<Read | { problem: string }> {
  const check = await readTextFile(cache, path);
  if (!check.ok) return { problem: `expected ${check.expected}, got ${check.detail}` };
  // The result's text file is written as UTF-8 without a BOM: its text encodes back to the same bytes.
  return { text: check.value.text, sha256: createHash('sha256').update(check.value.text).digest('hex') };
}

/** A text longer than its model takes (the bound it was priced at): the service would refuse it. */
function textTooLong(job: SendableJob, textChars: number | undefined, models: readonly Model[] | undefined): string | undefined {
  const model = models === undefined ? undefined : modelOf(job, models);
  const maxChars = model === undefined ? undefined : kindOf(job.type).splittable?.maxChars(model);
  if (maxChars === undefined || textChars === undefined || textChars <= maxChars) return undefined;
  return `its text is ${textChars} characters, more than the ${maxChars} ${String(job.params['model'])} takes`;
}
