import type { RunContext } from './context.js';
import type { FollowedJob } from './followed.js';
import { pollOnce } from './follow.js';

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
 * Every submitted job waiting for its result, ordered by when it is next due for a status
 * call. A fixed number of workers take the earliest due job, ask once, and put it back with a
 * longer delay while it runs. Ten thousand jobs in flight cost ten thousand small records and
 * one timer, not ten thousand sleeping loops, and never more than `workers` requests at once.
 */
export class FollowQueue {
  readonly #ctx: RunContext;
  readonly #heap: Followed[] = [];
  readonly #waiters = new Set<() => void>();
  /** The jobs followed (in the heap or being asked about), by id, for forget(). */
  readonly #queued = new Map<string, Followed>();
  #inFlight = 0;
  #closed = false;

  constructor(ctx: RunContext) {
    this.#ctx = ctx;
  }

  /** Follows a job, first asked about after `firstMs` (default: its kind's schedule). */
  add(job: FollowedJob, requestId: string, firstMs?: number): void {
    const schedule = this.#ctx.options.poll[job.type];
    const now = Date.now();
    const delayMs = firstMs ?? schedule.firstMs;
    this.#push({ job, requestId, dueMs: now + delayMs, delayMs: schedule.firstMs, giveUpAtMs: now + schedule.giveUpMs });
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

  /** No more jobs will be added: workers end once every job has ended or been left for later. */
  close(): void {
    this.#closed = true;
    this.#wakeAll();
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
    while (this.#inFlight > 0) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
  }

  async #work(): Promise<void> {
    for (;;) {
      const item = await this.#next();
      if (item === undefined) return;
      this.#inFlight += 1;
      try {
        // Forgotten while it was being asked about: a delivery has it, so it does not come back.
        if ((await pollOnce(this.#ctx, item.job, item.requestId, item.giveUpAtMs)) === 'again' && item.forgotten !== true) {
          const schedule = this.#ctx.options.poll[item.job.type];
          item.delayMs = Math.min(item.delayMs * schedule.factor, schedule.maxMs);
          item.dueMs = Date.now() + item.delayMs;
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
      if (this.#ctx.stop.aborted) return undefined;
      const first = this.#heap[0];
      if (first?.forgotten === true) {
        this.#pop();
        continue;
      }
      if (first === undefined) {
        // A job being polled right now may come back; only an empty, closed, idle queue is done.
        if (this.#closed && this.#inFlight === 0) return undefined;
        await this.#waitForChange();
        continue;
      }
      const waitMs = first.dueMs - Date.now();
      if (waitMs <= 0) return this.#pop();
      await this.#waitForChange(waitMs);
    }
  }

  #waitForChange(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.#ctx.stop;
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

  // A binary min-heap on dueMs: a handful of lines, not worth a dependency.
  #push(item: Followed): void {
    this.#queued.set(item.job.id, item);
    const heap = this.#heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.dueMs <= item.dueMs) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = item;
  }

  #pop(): Followed | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.dueMs < heap[left]!.dueMs ? right : left;
      if (heap[child]!.dueMs >= last.dueMs) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
