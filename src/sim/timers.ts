/** The simulator's pending timers (refunds, webhook attempts, latency), cleared together when it closes. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  closed = false;

  /** Runs `run` in `ms` unless closed first; `unref`: without holding the process open. */
  after(ms: number, run: () => void, unref = false): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      run();
    }, Math.max(0, ms));
    if (unref) timer.unref();
    this.pending.add(timer);
  }

  sleep(ms: number): Promise<void> {
    return ms <= 0 ? Promise.resolve() : new Promise((resolve) => this.after(ms, resolve));
  }

  close(): void {
    this.closed = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}
