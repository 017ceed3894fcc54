/**
 * Jobs being collected, and the work that collects them after their delivery was answered: a
 * claim per job shared by deliveries and the poller (one collection at a time per job), and a
 * bound on collections at once (a burst of deliveries must not start a thousand downloads).
 */
export class Collections {
  readonly #held = new Set<string>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #waiting: (() => void)[] = [];
  readonly #limit: number;
  readonly #onFailure: (error: unknown) => void;
  #running = 0;
  #failure: unknown;

  constructor(limit: number, onFailure: (error: unknown) => void) {
    this.#limit = limit;
    this.#onFailure = onFailure;
  }

  isHeld(jobId: string): boolean {
    return this.#held.has(jobId);
  }

  /** Takes the job; undefined when someone has it. The release must be called once. */
  hold(jobId: string): (() => void) | undefined {
    if (this.#held.has(jobId)) return undefined;
    this.#held.add(jobId);
    return () => this.#held.delete(jobId);
  }

  /** Runs `work` when a slot is free; its error is kept for drained() and told at once. */
  run(work: () => Promise<void>): void {
    const task = (async () => {
      // A slot freed goes straight to the next in line, so the bound holds.
      if (this.#running < this.#limit) this.#running += 1;
      else await new Promise<void>((resolve) => this.#waiting.push(resolve));
      try {
        await work();
      } finally {
        const next = this.#waiting.shift();
        if (next === undefined) this.#running -= 1;
        else next();
      }
    })().catch((error: unknown) => {
      this.#failure ??= error;
      this.#onFailure(error);
    });
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  /** Resolves once every collection started has ended; rejects with the first error one met. */
  async drained(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all(this.#tasks);
    if (this.#failure !== undefined) throw this.#failure;
  }
}
