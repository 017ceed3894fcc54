import type { FieldPosition, ResolvedJob } from '../jobs/index.js';
import { expectedGot, type ManifestIssue } from './errors.js';

/** Where a job is written, as messages and the ledger name it: `file:line:col`. */
export function originOf(job: Pick<ResolvedJob, 'position'>, manifestFile: string): string {
  return `${job.position.file ?? manifestFile}:${job.position.line}:${job.position.col}`;
}

/**
 * The problem of a job whose id another job of the manifest already holds (compared ignoring
 * case). Found while reading (manifest/read.ts) or by the ledger when jobs stream into it.
 */
export function duplicateIssue(
  job: Claimant,
  manifestFile: string,
  heldBy: { id: string; origin: string | null },
): ManifestIssue {
  const where = heldBy.origin ?? 'an earlier job';
  let got = `"${job.id}" (also the id of the job at ${where})`;
  let hint: string | undefined;
  if (heldBy.id !== job.id) {
    got = `"${job.id}" (the job at ${where} has "${heldBy.id}")`;
    hint = 'ids become file names, and some file systems ignore case';
  } else if (job.idDerived) {
    got = `"${job.id}" (derived; the job at ${where} has identical content)`;
    hint = 'give these jobs ids of their own if both should run';
  }
  return jobIssue(job, manifestFile, 'id', { expected: 'a unique id', got, hint });
}

/**
 * The problem of a job whose content another id was already paid for: sent under its new id it
 * would be paid twice, and the id that had it would keep a result that is not its content now.
 */
export function movedIssue(job: IdJob, manifestFile: string, paidAs: { id: string; state: string }): ManifestIssue {
  return jobIssue(job, manifestFile, 'id', {
    expected: 'an id that keeps its content between runs',
    got: `"${job.id}", whose content "${paidAs.id}" was already sent with (${paidAs.state})`,
    hint:
      'ids from a row number ({n}) shift when a row is inserted: give the rows ids of their own (an id column keeping the ids already run), or add new rows at the end',
  });
}

export type Claimant = Pick<ResolvedJob, 'id' | 'idDerived' | 'inlineIndex' | 'position' | 'fieldPositions'>;
type IdJob = Omit<Claimant, 'idDerived'>;


/** A problem with one field of a job, at where that field is written (else at the job), labelled with the job. */
export function jobIssue(
  job: IdJob,
  manifestFile: string,
  field: string,
  problem: { expected: string; got: string; hint?: string | undefined },
  at: FieldPosition = job.fieldPositions[field] ?? job.position,
): ManifestIssue {
  return {
    file: at.file ?? manifestFile,
    line: at.line,
    col: at.col,
    ...(job.inlineIndex === undefined ? {} : { jobIndex: job.inlineIndex }),
    jobId: job.id,
    field,
    ...(at.fromDefaults === true ? { fromDefaults: true } : {}),
    ...expectedGot(problem.expected, problem.got),
    ...(problem.hint === undefined ? {} : { hint: problem.hint }),
  };
}

type Where = Pick<ManifestIssue, 'file' | 'line' | 'col'>;

/**
 * The ids of a manifest's jobs, each with where it was first written, compared ignoring case: ids
 * become file names, and some file systems ignore case (ASCII letters, as the ledger's NOCASE
 * compares them). Typed arrays, not a Set of strings: a million ids take tens of MB, not hundreds.
 * Open addressing with linear probing over entry numbers; every array grows by doubling.
 */
export class IdSet {
  /** Entry number + 1 per slot (0: free), and the id's hash, so that a probe rarely compares characters. */
  #slots = new Int32Array(1024);
  #slotHashes = new Uint32Array(1024);
  /** Entry i's characters are chars[ends[i - 1] .. ends[i]). */
  #chars = new Uint16Array(16_384);
  #ends = new Uint32Array(1024);
  /** Entry i was written in files[where[3i]] at line where[3i + 1], column where[3i + 2]. */
  #where = new Uint32Array(3 * 1024);
  /** A byte per entry for its holder's use (read.ts: the job's type and whether it was split). */
  #tags = new Uint8Array(1024);
  readonly #files: string[] = [];
  readonly #fileIndex = new Map<string, number>();
  #count = 0;

  /** Records `id`; answers the id and place of the job that already held it, if one did (then nothing is recorded). */
  add(id: string, where: Where, tag = 0): { id: string; origin: string } | undefined {
    const found = this.#find(id);
    if (found.entry >= 0) return this.#heldBy(found.entry);
    this.#insert(found.slot, found.hash, id, where);
    this.#tags = grown(this.#tags, this.#count);
    this.#tags[this.#count - 1] = tag;
    return undefined;
  }

  /** The tag of `id`'s entry (ignoring case), undefined when no entry has it. */
  tagOf(id: string): number | undefined {
    const { entry } = this.#find(id);
    return entry < 0 ? undefined : this.#tags[entry];
  }

  /** Adds `bits` to the tag of `id`'s entry, if there is one. */
  addTag(id: string, bits: number): void {
    const { entry } = this.#find(id);
    if (entry >= 0) this.#tags[entry] = (this.#tags[entry] ?? 0) | bits;
  }

  /** `id`'s entry (-1: none), or the free slot where it would go. */
  #find(id: string): { entry: number; slot: number; hash: number } {
    const hash = hashIgnoringCase(id);
    const mask = this.#slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = (this.#slots[slot] ?? 0) - 1;
      const found = entry < 0 || (this.#slotHashes[slot] === hash && this.#sameIgnoringCase(entry, id));
      if (found) return { entry, slot, hash };
    }
  }

  #insert(slot: number, hash: number, id: string, where: Where): void {
    const entry = this.#count;
    const start = this.#startOf(entry);
    this.#chars = grown(this.#chars, start + id.length);
    for (let i = 0; i < id.length; i += 1) this.#chars[start + i] = id.charCodeAt(i);
    this.#ends = grown(this.#ends, entry + 1);
    this.#ends[entry] = start + id.length;
    this.#where = grown(this.#where, 3 * entry + 3);
    this.#where[3 * entry] = this.#fileNumber(where.file);
    this.#where[3 * entry + 1] = where.line;
    this.#where[3 * entry + 2] = where.col;
    this.#slots[slot] = entry + 1;
    this.#slotHashes[slot] = hash;
    this.#count += 1;
    // At most half full: probes stay short.
    if (2 * this.#count > this.#slots.length) this.#rehash();
  }

  #rehash(): void {
    const [oldSlots, oldHashes] = [this.#slots, this.#slotHashes];
    this.#slots = new Int32Array(2 * oldSlots.length);
    this.#slotHashes = new Uint32Array(2 * oldSlots.length);
    const mask = this.#slots.length - 1;
    oldSlots.forEach((entryPlusOne, old) => {
      if (entryPlusOne === 0) return;
      const hash = oldHashes[old] ?? 0;
      let slot = hash & mask;
      while (this.#slots[slot] !== 0) slot = (slot + 1) & mask;
      this.#slots[slot] = entryPlusOne;
      this.#slotHashes[slot] = hash;
    });
  }

  #startOf(entry: number): number {
    return entry === 0 ? 0 : (this.#ends[entry - 1] ?? 0);
  }

  #sameIgnoringCase(entry: number, id: string): boolean {
    const start = this.#startOf(entry);
    if ((this.#ends[entry] ?? 0) - start !== id.length) return false;
    for (let i = 0; i < id.length; i += 1) if (foldCase(this.#chars[start + i] ?? 0) !== foldCase(id.charCodeAt(i))) return false;
    return true;
  }

  #heldBy(entry: number): { id: string; origin: string } {
    const id = String.fromCharCode(...this.#chars.subarray(this.#startOf(entry), this.#ends[entry]));
    const [file, line, col] = this.#where.subarray(3 * entry, 3 * entry + 3);
    return { id, origin: `${this.#files[file ?? 0]}:${line}:${col}` };
  }

  #fileNumber(file: string): number {
    let number = this.#fileIndex.get(file);
    if (number === undefined) {
      number = this.#files.push(file) - 1;
      this.#fileIndex.set(file, number);
    }
    return number;
  }
}

function foldCase(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** FNV-1a over the case-folded characters. */
function hashIgnoringCase(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i += 1) hash = Math.imul(hash ^ foldCase(id.charCodeAt(i)), 0x01000193);
  return hash >>> 0;
}

/** `array`, or a copy twice as long (or more) when it holds fewer than `length` items. */
function grown<T extends Uint8Array | Uint16Array | Uint32Array>(array: T, length: number): T {
  if (length <= array.length) return array;
  const copy = new (array.constructor as new (size: number) => T)(Math.max(2 * array.length, length));
  copy.set(array);
  return copy;
}
