import { stat } from 'node:fs/promises';
import type { Model } from '../api/types.js';
import type { ResolvedJob, SendableJob } from '../jobs/index.js';
import { unitFingerprint } from '../manifest/content-hash.js';
import { IssueCollector } from '../manifest/errors.js';
import { duplicateIssue, movedIssue, originOf } from '../manifest/ids.js';
import type { Manifest, ManifestUnit } from '../manifest/open.js';
import { readUnit } from '../manifest/read.js';
import { stampOf } from '../manifest/files.js';
import { groupKeyOf, priceKeyOf } from '../pricing/keys.js';
import type { ChangedJob, IngestLedger, JobRow, JobSpec, LedgerIngest } from '../store/index.js';
import type { SyncResult, UnitRecord, UnitState } from '../store/index.js';

export interface IngestRequest {
  manifest: Manifest;
  ledger: IngestLedger;
  /** The service's catalogue: every job is checked against it (undefined: offline checks only). */
  models?: readonly Model[] | undefined;
  onChanged?: ((change: ChangedJob) => void) | undefined;
  onProgress?: ((rows: number) => void) | undefined;
}

export interface IngestResult extends SyncResult {
  /** Units read again; the others were unchanged since the ledger last read them. */
  read: string[];
}

/** Files of a unit checked at once when telling whether they changed. */
const FILE_WINDOW = 1000;

/**
 * Streams the manifest's jobs into the ledger, unit by unit, each batch as it is read: nothing
 * holds every job. A unit unchanged since the ledger last read it (its fingerprint, and the files
 * its rows named) is not read again. Every problem (duplicate ids across the whole manifest, and
 * content another id was already paid for, which only the ledger can see) is reported at once;
 * then the ledger is left exactly as it was (ManifestError, exit 2).
 */
export async function ingestManifest(request: IngestRequest): Promise<IngestResult> {
  const { manifest, ledger } = request;
  const recorded = new Map((await ledger.units()).map((unit) => [unit.key, unit]));
  const plan: { unit: ManifestUnit; state: UnitState; keep: boolean }[] = [];
  for (const unit of manifest.units) {
    const fingerprint = await unitFingerprint(manifest, unit, request.models);
    const keep = manifest.issues.length === 0 && (await unchanged(ledger, recorded.get(unit.key), fingerprint));
    plan.push({ unit, state: { key: unit.key, position: unit.position, fingerprint }, keep });
  }
  const issues = new IssueCollector();
  issues.addAll(manifest.issues);
  const session = await ledger.beginIngest();
  try {
    for (const { unit, keep } of plan) if (keep) await session.keep(unit.key);
    let rows = 0;
    for (const { unit, keep } of plan) {
      if (keep) continue;
      for await (const batch of readUnit(manifest, unit, { models: request.models })) {
        issues.addAll(batch.issues);
        await putBatch(session, manifest, unit, batch, issues, request.onChanged);
        rows += batch.jobs.length + batch.claims.length;
        request.onProgress?.(rows);
      }
    }
    const error = issues.error();
    if (error !== undefined) throw error;
    const sync = await session.commit(plan.map((p) => p.state));
    return { ...sync, read: plan.filter((p) => !p.keep).map((p) => p.unit.key) };
  } catch (error) {
    await session.rollback();
    throw error;
  }
}

async function putBatch(
  session: LedgerIngest,
  manifest: Manifest,
  unit: ManifestUnit,
  batch: { jobs: ResolvedJob[]; claims: Parameters<typeof duplicateIssue>[0][]; files: { path: string; stamp: string }[] },
  issues: IssueCollector,
  onChanged: IngestRequest['onChanged'],
): Promise<void> {
  const file = manifest.displayPath;
  const claims = batch.claims.map((claim) => ({ id: claim.id, origin: originOf(claim, file) }));
  const conflicts = claims.length === 0 ? [] : await session.claim(unit.key, claims);
  const put = await session.put(unit.key, batch.jobs.map((job) => specOf(job, file)));
  const claimed = new Map(batch.claims.map((claim) => [claim.id, claim]));
  const jobs = new Map(batch.jobs.map((job) => [job.id, job]));
  const add = <T>(item: T | undefined, issue: (item: T) => Parameters<IssueCollector['add']>[0]): void => {
    if (item !== undefined) issues.add(issue(item));
  };
  for (const { id, heldBy } of conflicts) add(claimed.get(id), (claim) => duplicateIssue(claim, file, heldBy));
  for (const { id, heldBy } of put.conflicts) add(jobs.get(id), (job) => duplicateIssue(job, file, heldBy));
  for (const { id, paidAs } of put.moved) add(jobs.get(id), (job) => movedIssue(job, file, paidAs));
  for (const change of put.changed) onChanged?.(change);
  if (batch.files.length > 0) await session.putUnitFiles(unit.key, batch.files);
}

/** A unit is unchanged when its fingerprint is the one recorded and every file its rows named is as it was. */
async function unchanged(
  ledger: Pick<IngestLedger, 'unitFiles'>,
  record: UnitRecord | undefined,
  fingerprint: string,
): Promise<boolean> {
  if (record === undefined || record.fingerprint !== fingerprint) return false;
  for (let after = ''; ; ) {
    const files = await ledger.unitFiles(record.key, after, FILE_WINDOW);
    for (const file of files) {
      const now = await stat(file.path).then(stampOf, () => undefined);
      if (now !== file.stamp) return false;
    }
    if (files.length < FILE_WINDOW) return true;
    after = files.at(-1)?.path ?? after;
  }
}

/** A resolved job as the ledger records it: everything its submit sends, and its price keys. */
export function specOf(job: ResolvedJob, manifestFile: string): JobSpec {
  const groupKey = groupKeyOf(job);
  // A list field's item (`images.1`) is located at its field.
  const at = (key: string) =>
    originOf({ position: job.fieldPositions[key.replace(/\.\d+$/, '')] ?? job.position }, manifestFile);
  return {
    id: job.id,
    index: job.index,
    contentHash: job.contentHash,
    type: job.type,
    paramsJson: JSON.stringify(job.params),
    textChars: job.textChars,
    text: job.text,
    filesJson: Object.keys(job.media).length === 0 ? undefined : JSON.stringify(job.media),
    tags: job.tags,
    origin: originOf(job, manifestFile),
    groupKey,
    priceKey: priceKeyOf(job, groupKey),
    parentId: job.parentId,
    inputs: job.inputs && Object.entries(job.inputs).map(([field, from]) => ({ field, from, origin: at(field) })),
    priceBound: job.priceBound,
  };
}

/** A job read back from the ledger, to be sent: exactly what was resolved and recorded. */
export function jobFromRow(row: JobRow): SendableJob {
  return {
    id: row.id,
    type: row.type,
    params: JSON.parse(row.paramsJson) as Record<string, unknown>,
    text: row.text ?? undefined,
    textChars: row.textChars ?? undefined,
    // Rows written before audio and video hold the same shape, less the optional facts.
    media: row.filesJson === null ? {} : (JSON.parse(row.filesJson) as SendableJob['media']),
  };
}
