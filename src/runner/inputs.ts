import { createHash } from 'node:crypto';
import type { Model } from '../api/types.js';
import { factOf, kindOf, type MediaField, type MediaRef, type SendableJob } from '../jobs/index.js';
import { modelOf } from '../manifest/catalogue.js';
import { countChars } from '../manifest/content-hash.js';
import { checkMedia, fileScope, newFileCache, readTextFile, type FileCache } from '../manifest/files.js';
import type { GraphLedger, JobRow, KeyPrice, ListingLedger } from '../store/index.js';
import type { RunEvent } from './context.js';
import { jobFromRow } from './ingest.js';

/** The job with its inputs in place, or why it cannot be sent. */
type Materialised = { job: SendableJob } | { blocked: string };

export interface DependentDeps {
  ledger: Pick<ListingLedger, 'getJob'> & Pick<GraphLedger, 'priceForSend'>;
  outDir: string;
  models: readonly Model[] | undefined;
  /** The normal price path for one job (runner/prepare.ts jobPricer). */
  price: (job: SendableJob) => Promise<KeyPrice>;
  emit: (event: RunEvent) => void;
}

/**
 * The job a row sends: as recorded, or for a dependent, with its inputs put in place from its
 * upstreams' results, and when it was priced at a bound, priced for real before its reservation,
 * so the budget counts what it costs.
 */
export async function jobToSend(deps: DependentDeps, row: JobRow): Promise<Materialised> {
  const job = jobFromRow(row);
  if (row.inputs === null) return { job };
  const put = await materialise(deps, job, row.inputs);
  if ('blocked' in put || !row.priceBound) return put;
  const price = await deps.price(put.job);
  await deps.ledger.priceForSend(row.id, price);
  deps.emit({ kind: 'repriced', id: row.id, boundMicro: row.priceMicro ?? 0, priceMicro: price.priceMicro });
  // The row a 429 gives back to its lane is this one: priced once; its `submitted` event spends the real price.
  row.priceBound = false;
  row.priceMicro = price.priceMicro;
  return put;
}

/**
 * Puts a dependent's inputs in place, from its upstreams' results on disk: a media file checked
 * by its bytes as the manifest checks a file for that field (format, size, duration) and its
 * facts priced by (into the parameters, over the bound the job was priced at); a text as the
 * field's value (a speech job's text). Each must still be the file its upstream was recorded
 * with: the sha256 the ledger holds (and records as sent with the reservation). `models`: the
 * catalogue, for a text's length.
 */
async function materialise(
  deps: DependentDeps,
  job: SendableJob,
  inputs: Readonly<Record<string, string>>,
): Promise<Materialised> {
  const kind = kindOf(job.type);
  const params: Record<string, unknown> = { ...job.params };
  const media: Record<string, MediaRef> = { ...job.media };
  let { text, textChars } = job;
  // Results are mediabatch's own files: the manifest's folder does not confine them.
  const cache = newFileCache(await fileScope(deps.outDir, true));
  for (const [field, fromId] of Object.entries(inputs)) {
    const upstream = await deps.ledger.getJob(fromId);
    const path = upstream?.resultPath ?? null;
    const sha256 = upstream?.resultSha256 ?? null;
    const from = `input "${field}" from "${fromId}"`;
    if (upstream?.state !== 'done' || path === null || sha256 === null) return { blocked: `${from}: it is not done` };
    const spec = kind.files[field.replace(/\.\d+$/, '')];
    const read = typeof spec === 'object' ? await mediaInput(cache, path, spec) : await textInput(cache, path);
    if ('problem' in read) return { blocked: `${from} does not fit: ${read.problem}` };
    if (read.sha256 !== sha256) return { blocked: `${from}: ${path} changed since it was downloaded` };
    if ('ref' in read) {
      media[field] = read.ref;
      Object.assign(params, read.facts);
    } else if (kind.textFrom?.field === field) {
      [text, textChars] = [read.text, countChars(read.text)];
    } else params[field] = read.text;
  }
  const tooLong = textTooLong(job, textChars, deps.models);
  if (tooLong !== undefined) return { blocked: tooLong };
  return { job: { ...job, params, media, text, textChars } };
}

/** A media input, with the facts its kind prices by (by parameter), or a text input. */
type Read = ({ ref: MediaRef; facts: Record<string, number | undefined> } | { text: string }) & { sha256: string };

async function mediaInput(cache: FileCache, path: string, spec: MediaField): Promise<Read | { problem: string }> {
  const check = await checkMedia(cache, path, spec);
  if (!check.ok) return { problem: `expected ${check.expected}, got ${check.detail}` };
  const { stamp: _stamp, ...found } = check.value;
  const facts = Object.fromEntries(Object.entries(spec.facts ?? {}).map(([name, fact]) => [name, factOf(found, fact)]));
  return { ref: { ...found, written: path }, facts, sha256: found.sha256 };
}

async function textInput(cache: FileCache, path: string): Promise<Read | { problem: string }> {
  const check = await readTextFile(cache, path);
  if (!check.ok) return { problem: `expected ${check.expected}, got ${check.detail}` };
  // The result's text file is written as UTF-8 without a BOM: its text encodes back to the same bytes.
  return { text: check.value.text, sha256: createHash('sha256').update(check.value.text).digest('hex') };
}

/** A text longer than its model takes (the bound it was priced at): the service would refuse it. */
function textTooLong(job: SendableJob, textChars: number | undefined, models?: readonly Model[]): string | undefined {
  const model = models === undefined ? undefined : modelOf(job, models);
  const maxChars = model === undefined ? undefined : kindOf(job.type).splittable?.maxChars(model);
  if (maxChars === undefined || textChars === undefined || textChars <= maxChars) return undefined;
  return `its text is ${textChars} characters, more than the ${maxChars} ${String(job.params['model'])} takes`;
}
