import type { RunDeps } from './context.js';
import { followedFromRow, type Completion, type FollowedJob } from './follow.js';

/** Submitted jobs read from the ledger at a time, and how few may be left before reading more. */
const LOAD_ROWS = 1000;
const LOW_WATER = 250;

interface Followed {
  job: FollowedJob;
  requestId: string;
  dueMs: number;
  delayMs: number;
  giveUpAtMs: number;
  /** Settled by a webhook delivery: dropped when it comes up, without a call. */
  forgotten?: boolean;
}

/**
 * Submitted jobs waiting for their results, ordered by when each is next due for a status call.
 * They come from the ledger, in the order they became submitted (earlier runs' first), a window
 * at a time whenever few are left: a million submitted jobs cost a thousand records here. A fixed
 * number of workers take the earliest due job, ask once, and put it back with a longer delay
 * while it runs: never more than `workers` requests at once, and one timer.
 */
export class FollowQueue {
  readonly #deps: RunDeps;
  readonly #completion: Completion;
  /** Ordered by dueMs, earliest first. */
  readonly #due: Followed[] = [];
  readonly #waiters = new Set<() => void>();
  /** The jobs followed (due or being asked about), by id, for forget(): a window's worth. */
  readonly #queued = new Map<string, Followed>();
  /** Jobs submitted before this run started are earlier runs': asked about at their kind's own first poll. */
  readonly #startedIso: string;
  #inFlight = 0;
  #closed = false;
  #seq = 0;
  /** The ledger may hold submitted jobs not read yet. */
  #more = true;
  #loading: Promise<void> | undefined;
  /** Notices of new submits (one while a window is read means more may be waiting). */
  #noticed = 0;

  constructor(deps: RunDeps, completion: Completion) {
    this.#deps = deps;
    this.#completion = completion;
    this.#startedIso = new Date(deps.clock.nowMs()).toISOString();
  }

  /** A job was submitted (and its request id committed): the ledger has another to follow. */
  notify(): void {
    this.#more = true;
    this.#noticed += 1;
    this.#wakeAll();
  }

  /** A job settled another way (a webhook delivery): it leaves the queue without a status call. */
  forget(jobId: string): void {
    const item = this.#queued.get(jobId);
    if (item === undefined) return;
    item.forgotten = true;
    this.#queued.delete(jobId);
    this.#wakeAll();
  }

  /** Follows a job, first asked about after `firstMs` (default: its kind's schedule). */
  #add(job: FollowedJob, requestId: string, firstMs?: number): void {
    const schedule = this.#completion.schedules[job.type];
    const now = this.#deps.clock.nowMs();
    const delayMs = firstMs ?? schedule.firstMs;
    this.#push({ job, requestId, dueMs: now + delayMs, delayMs: schedule.firstMs, giveUpAtMs: now + schedule.giveUpMs });
  }

  /** Reads the next window of submitted jobs when few are left and more may be waiting. */
  async #load(): Promise<void> {
    if (!this.#more || this.#due.length > LOW_WATER) return;
    this.#loading ??= (async () => {
      const noticed = this.#noticed;
      const rows = await this.#deps.ledger.readFollowing(this.#seq, LOAD_ROWS);
      for (const row of rows) {
        const earlier = row.submittedAt !== null && row.submittedAt < this.#startedIso;
        this.#add(followedFromRow(row), row.requestId, earlier ? this.#completion.earlierFirstPollMs(row.type) : undefined);
      }
      this.#seq = rows.at(-1)?.followSeq ?? this.#seq;
      // A short window means none is left, unless a submit was recorded meanwhile.
      if (rows.length < LOAD_ROWS && this.#noticed === noticed) this.#more = false;
    })().finally(() => {
      this.#loading = undefined;
      this.#wakeAll();
    });
    await this.#loading;
  }

  /** No more jobs: workers end once every job has ended or been left for later. */
  close(): void {
    this.#closed = true;
    this.#wakeAll();
  }

  /**
   * Resolves once no job is left to follow: none queued, none being asked about, none in the
   * ledger not read yet (or once the run stops). The queue stays open: jobs submitted later
   * (a retry pass) are followed as before.
   */
  async idle(): Promise<void> {
    while (!this.#deps.stop.aborted && (this.#queued.size > 0 || this.#inFlight > 0 || this.#more)) await this.#waitForChange();
  }

  async run(workers: number): Promise<void> {
    await Promise.all(Array.from({ length: workers }, () => this.#work()));
  }

  /**
   * Resolves once no job is being asked about or collected. A fatal error in one worker ends
   * `run` at once and stops new work, but a result another worker already has on disk must
   * still be recorded before the run closes its ledger.
   */
  async drained(): Promise<void> {
    // Once the run stops, the stop no longer wakes anyone: each wait ends with a job that ends.
    while (this.#inFlight > 0) await this.#waitForChange();
  }

  async #work(): Promise<void> {
    for (;;) {
      const item = await this.#next();
      if (item === undefined) return;
      this.#inFlight += 1;
      try {
        // Forgotten while it was being asked about: a delivery has it, so it does not come back.
        if ((await this.#completion.poll(item.job, item.requestId, item.giveUpAtMs)) === 'again' && item.forgotten !== true) {
          const schedule = this.#completion.schedules[item.job.type];
          item.delayMs = Math.min(item.delayMs * schedule.factor, schedule.maxMs);
          item.dueMs = this.#deps.clock.nowMs() + item.delayMs;
          this.#push(item);
        } else if (this.#queued.get(item.job.id) === item) {
          this.#queued.delete(item.job.id);
        }
      } finally {
        this.#inFlight -= 1;
        this.#wakeAll();
      }
    }
  }

  async #next(): Promise<Followed | undefined> {
    for (;;) {
      if (this.#deps.stop.aborted) return undefined;
      await this.#load();
      const first = this.#due[0];
      if (first?.forgotten === true) {
        this.#due.shift();
        continue;
      }
      if (first === undefined) {
        // A job being polled right now may come back; only an empty, closed, idle queue with
        // nothing left in the ledger is done.
        if (this.#closed && this.#inFlight === 0 && !this.#more) return undefined;
        if (this.#more) continue;
        await this.#waitForChange();
        continue;
      }
      const waitMs = first.dueMs - this.#deps.clock.nowMs();
      if (waitMs <= 0) return this.#due.shift();
      await this.#waitForChange(waitMs);
    }
  }

  #waitForChange(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.#deps.stop;
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        stop.removeEventListener('abort', done);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      this.#waiters.add(done);
      stop.addEventListener('abort', done, { once: true });
    });
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  // The queue holds a window or two of jobs: a sorted insert is cheap enough.
  #push(item: Followed): void {
    this.#queued.set(item.job.id, item);
    const due = this.#due;
    let low = 0;
    for (let high = due.length; low < high; ) {
      const mid = (low + high) >> 1;
      if (due[mid]!.dueMs <= item.dueMs) low = mid + 1;
      else high = mid;
    }
    due.splice(low, 0, item);
  }
}
