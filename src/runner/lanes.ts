import type { PacedClass } from './pace.js';

/** What became of one job a lane handed to a worker. */
export type LaneOutcome =
  /** Sent, settled or given up: the lane goes on with its next job. */
  | 'next'
  /** Provably not taken (a 429): it goes back to the front of its lane, behind the class's pause. */
  | 'again'
  /** Its class can send nothing more in this run (a daily limit under --no-wait): the lane closes. */
  | 'close';

export interface Lane<T> {
  cls: PacedClass;
  /** The class's next job to send, in manifest order; undefined when none is, for now. */
  take(): Promise<T | undefined>;
  /**
   * Resolves true when `take` may have another job (or one of the lane's came back), false once
   * none can come: the send is over or stopping. `idle`: the lane holds no job, so the send may end.
   */
  wait(idle: boolean): Promise<boolean>;
  /** A job taken is over (`again`: it goes back to the front of the lane, still the lane's). */
  settled(item: T, again: boolean): void;
  /** Nothing more is taken for this lane. */
  close(): Promise<void>;
}

export interface LaneDeps<T> {
  concurrency: number;
  stop: AbortSignal;
  /** Waits for one request of `cls` to be allowed (the class's pace and pauses); rejects on `stop`. */
  take: (cls: PacedClass, signal: AbortSignal) => Promise<void>;
  /** Does one job on a worker; `signal` aborts when the run stops or the lane closes. */
  work: (item: T, signal: AbortSignal) => Promise<LaneOutcome>;
}

/**
 * Sends each endpoint class's jobs in a lane of its own, side by side, on `concurrency` shared
 * workers. A lane waits for its class's pace before it asks for a worker, so a job held back
 * by its pace, a 429 or a daily limit never keeps a worker, or a place in line, from another
 * class; within a lane the jobs start in manifest order. Settles when no lane can have anything
 * more to send (runner/send-feed.ts) and every job it started is over.
 */
export async function sendInLanes<T>(lanes: readonly Lane<T>[], deps: LaneDeps<T>): Promise<void> {
  const workers = new Workers(deps.concurrency);
  const wakeOnStop = (): void => workers.wakeAll();
  deps.stop.addEventListener('abort', wakeOnStop, { once: true });
  try {
    await Promise.all(lanes.map((lane) => runLane(lane, deps, workers)));
  } finally {
    deps.stop.removeEventListener('abort', wakeOnStop);
  }
}

async function runLane<T>(lane: Lane<T>, deps: LaneDeps<T>, workers: Workers): Promise<void> {
  const closed = new AbortController();
  const signal = AbortSignal.any([deps.stop, closed.signal]);
  const again: T[] = [];
  const started = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  try {
    while (!signal.aborted) {
      const item = again.shift() ?? (await lane.take());
      if (item === undefined) {
        // None ready now: a job still out may come back to be sent again, or make another ready.
        if (!(await lane.wait(started.size === 0))) break;
        continue;
      }
      try {
        await deps.take(lane.cls, signal);
      } catch {
        break;
      }
      if (!(await workers.take(signal))) break;
      const job: Promise<void> = deps
        .work(item, signal)
        .then(
          (outcome) => {
            if (outcome === 'again') again.unshift(item);
            if (outcome === 'close') closed.abort(new Error(`${lane.cls} can send nothing more in this run`));
            lane.settled(item, outcome === 'again');
          },
          (error: unknown) => {
            // A failure the caller does not handle ends the lane and, once its jobs are over, the send.
            failure ??= { error };
            closed.abort(error);
            lane.settled(item, false);
          },
        )
        .finally(() => {
          workers.give();
          started.delete(job);
        });
      started.add(job);
    }
  } finally {
    await Promise.all(started);
    await lane.close();
  }
  if (failure !== undefined) throw failure.error;
}

/**
 * A count of free workers, shared by the lanes (at most one waiter a lane). Not p-limit: a lane
 * must hold its place only until its signal aborts, and a queued p-limit call cannot leave.
 */
class Workers {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves true with a worker, or false once `signal` aborts (the worker is not taken). */
  async take(signal: AbortSignal): Promise<boolean> {
    while (this.#free === 0) {
      if (signal.aborted) return false;
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    if (signal.aborted) return false;
    this.#free -= 1;
    return true;
  }

  /** Every waiter looks again: one takes the worker, one whose lane closed meanwhile gives up. */
  give(): void {
    this.#free += 1;
    this.wakeAll();
  }

  /** Lets every waiter look at its signal again (a stop). */
  wakeAll(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }
}
