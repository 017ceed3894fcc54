import type { IdConflict, JobSpec, LedgerIngest, PutResult, SyncResult, UnitState } from '../../../src/store/ledger.js';
import { appendEvent, type MemoryData, type MemoryJob, type Sync } from './data.js';
import { writeSteps } from './graph.js';

/**
 * The ingest on a copy of the ledger's data (ledger.ts: LedgerIngest says what each step does;
 * store/sqlite/ingest.ts is the same in SQL): `commit` hands the copy back whole, `rollback`
 * drops it, so no reader sees half an ingest.
 */
export function memoryIngest(committed: MemoryData, nowIso: () => string, end: (data: MemoryData | undefined) => void): Sync<LedgerIngest> & { draft: MemoryData } {
  const draft = structuredClone(committed);
  delete draft.order;
  const gen = (draft.counters.ingest += 1);
  // Ids are unique ignoring case: every job by its folded id, and the ids rows with problems claimed.
  const byFolded = new Map<string, MemoryJob[]>();
  const index = (job: MemoryJob): void => {
    byFolded.set(job.id.toLowerCase(), [...(byFolded.get(job.id.toLowerCase()) ?? []), job]);
  };
  draft.jobs.forEach(index);
  const claims = new Map<string, { id: string; origin: string }>();
  const kept = new Set<string>();
  const started = new Map<string, number>();
  const counts = { added: 0, changed: 0, writes: 0 };
  let open = true;
  // Most ingests have no split job, and a first one nothing paid for: their lookups are skipped.
  let parts = [...draft.jobs.values()].some((job) => job.parentId !== null);
  const paid = [...draft.jobs.values()].some((job) => job.spentMicro > 0);

  const assertOpen = (): void => {
    if (!open) throw new Error('bug in mediabatch: the ledger ingest was used after it ended');
  };
  const start = (unitKey: string): void => {
    if (started.has(unitKey)) return;
    started.set(unitKey, 0);
    draft.unitFiles.delete(unitKey);
  };
  /** Another job of this manifest holds the id: one put in this ingest, or one of a unit kept as it was. */
  const holder = (jobs: readonly MemoryJob[]): MemoryJob | undefined =>
    jobs.find((job) => job.seen === gen || (job.inManifest && job.unit !== null && kept.has(job.unit)));
  const conflictOf = (id: string, origin: string): IdConflict | undefined => {
    const folded = id.toLowerCase();
    // A split job's id is held by its parts: it names their joined result.
    const part = parts ? holder([...draft.jobs.values()].filter((job) => job.inManifest && job.parentId?.toLowerCase() === folded)) : undefined;
    const held = holder(byFolded.get(folded) ?? []) ?? claims.get(folded) ?? (part && { id: part.parentId!, origin: part.origin });
    return held === undefined ? undefined : { id, origin, heldBy: { id: held.id, origin: held.origin } };
  };
  /** Whether the content is what another id already counts a spend for: recorded in `moved` if so. */
  const moved = (spec: JobSpec, result: PutResult): boolean => {
    if (!paid) return false;
    const other = [...draft.jobs.values()].find((job) => job.contentHash === spec.contentHash && job.spentMicro > 0 && job.id.toLowerCase() !== spec.id.toLowerCase());
    if (other !== undefined) result.moved.push({ id: spec.id, paidAs: { id: other.id, state: other.state } });
    return other !== undefined;
  };

  const putOne = (unitKey: string, spec: JobSpec, now: string, result: PutResult): void => {
    const conflict = conflictOf(spec.id, spec.origin);
    if (conflict !== undefined) {
      result.conflicts.push(conflict);
      return;
    }
    const place = { manifestIndex: spec.index, origin: spec.origin, tags: [...(spec.tags ?? [])], parentId: spec.parentId ?? null, unit: unitKey, seen: gen, inManifest: true };
    const content = {
      contentHash: spec.contentHash,
      type: spec.type,
      paramsJson: spec.paramsJson,
      textChars: spec.textChars ?? null,
      text: spec.text ?? null,
      filesJson: spec.filesJson ?? null,
      groupKey: spec.groupKey,
      priceKey: spec.priceKey,
      priceBound: spec.priceBound === true,
    };
    const inputRefs = (spec.inputs ?? []).map((input) => ({ ...input, sentSha256: null }));
    counts.writes += 1;
    if (spec.parentId !== undefined) parts = true;
    const job = draft.jobs.get(spec.id);
    if (job === undefined) {
      moved(spec, result);
      const fresh: MemoryJob = { id: spec.id, ...place, ...content, ...NEW_JOB, inputRefs, createdAt: now, updatedAt: now };
      draft.jobs.set(spec.id, fresh);
      index(fresh);
      counts.added += 1;
    } else if (job.contentHash === spec.contentHash) {
      // The same inputs (they are content): only where they were written moves.
      const sent = new Map(job.inputRefs.map((input) => [input.field, input.sentSha256]));
      Object.assign(job, place, { inputRefs: inputRefs.map((input) => ({ ...input, sentSha256: sent.get(input.field) ?? null })) });
    } else if (['pending', 'skipped', 'blocked'].includes(job.state) || (job.state === 'failed' && job.retryable === true && job.refunded === true)) {
      // Nothing was paid for it: it takes the new content, and its old price means nothing now.
      moved(spec, result);
      appendEvent(draft, now, spec.id, 'content_changed', null, null, { oldHash: job.contentHash, newHash: spec.contentHash });
      Object.assign(job, place, content, { inputRefs, priceMicro: null, priceSource: null, step: null, updatedAt: now });
    } else {
      // Sent (or in doubt, or finished): it keeps what was sent and paid for, and is reported.
      const oldHash = job.contentHash;
      Object.assign(job, place);
      if (moved(spec, result)) return;
      counts.changed += 1;
      result.changed.push({ id: spec.id, oldHash, newHash: spec.contentHash, state: job.state });
    }
  };

  return {
    draft,
    keep: (unitKey) => {
      assertOpen();
      kept.add(unitKey);
    },
    claim: (unitKey, claimed) => {
      assertOpen();
      start(unitKey);
      const conflicts: IdConflict[] = [];
      for (const { id, origin } of claimed) {
        const conflict = conflictOf(id, origin);
        if (conflict !== undefined) conflicts.push(conflict);
        else claims.set(id.toLowerCase(), { id, origin });
      }
      return conflicts;
    },
    put: (unitKey, specs) => {
      assertOpen();
      start(unitKey);
      const now = nowIso();
      // Jobs come and move: a manifest order read during the ingest is out of date now.
      delete draft.order;
      const result: PutResult = { conflicts: [], changed: [], moved: [] };
      for (const spec of specs) putOne(unitKey, spec, now, result);
      started.set(unitKey, (started.get(unitKey) ?? 0) + specs.length - result.conflicts.length);
      return result;
    },
    putUnitFiles: (unitKey, files) => {
      assertOpen();
      start(unitKey);
      const stamps = draft.unitFiles.get(unitKey) ?? new Map<string, string>();
      for (const file of files) stamps.set(file.path, file.stamp);
      draft.unitFiles.set(unitKey, stamps);
    },
    commit: (units) => {
      assertOpen();
      const result = finish(draft, gen, kept, started, units, counts, nowIso());
      open = false;
      end(draft);
      return result;
    },
    rollback: () => {
      if (!open) return;
      open = false;
      end(undefined);
    },
  };
}

/** What a job starts with, before anything is priced, sent or known of it. */
const NEW_JOB = {
  state: 'pending', attempts: 0, spentMicro: 0, carriedMicro: 0, priceMicro: null, priceSource: null, requestId: null, lastError: null,
  retryable: null, refunded: null, issue: null, resultPath: null, resultBytes: null, resultSha256: null,
  submittedAt: null, finishedAt: null, followSeq: null, step: null,
} as const;

/** Drops what the manifest no longer lists, records the units, and says what changed. */
function finish(
  draft: MemoryData,
  gen: number,
  kept: ReadonlySet<string>,
  started: ReadonlyMap<string, number>,
  units: readonly UnitState[],
  counts: { added: number; changed: number; writes: number },
  now: string,
): SyncResult {
  let dropped = 0;
  for (const job of draft.jobs.values()) {
    if (!job.inManifest || job.seen === gen || (job.unit !== null && kept.has(job.unit))) continue;
    job.inManifest = false;
    dropped += 1;
  }
  const listedKeys = new Set(units.map((unit) => unit.key));
  for (const key of [...draft.unitFiles.keys()]) if (!listedKeys.has(key)) draft.unitFiles.delete(key);
  for (const key of [...draft.units.keys()]) if (!listedKeys.has(key)) draft.units.delete(key);
  for (const unit of units) {
    if (kept.has(unit.key)) continue;
    // A unit read again without a row or a file of its own keeps no files from its last reading.
    if (!started.has(unit.key)) draft.unitFiles.delete(unit.key);
    draft.units.set(unit.key, { ...unit, jobs: started.get(unit.key) ?? 0, readAt: now });
  }
  draft.counters.jobsVersion += counts.writes + dropped + writeSteps(draft);
  const listed = [...draft.jobs.values()].filter((job) => job.inManifest).length;
  const result: SyncResult = { added: counts.added, changed: counts.changed, dropped, listed };
  appendEvent(draft, now, null, 'synced', null, null, { ...result, read: [...started.keys()], kept: [...kept] });
  return result;
}
