import { submitClassOf } from '../jobs/plans.js';
import type { JobCursor, JobRow } from '../store/index.js';
import type { Lane } from './lanes.js';
import type { PacedClass } from './pace.js';
import { WINDOW_ROWS } from './windows.js';

/** One window of a class's jobs ready to send, after `after` in manifest order. */
export type ReadWindow = (after: JobCursor, limit: number) => Promise<JobRow[]>;

/** What ends a send besides its lanes: every submit recorded, every result being collected in. */
export type Quiet = () => Promise<void>;

const isAfter = (row: JobRow, cursor: JobCursor): boolean =>
  row.manifestIndex > cursor.index || (row.manifestIndex === cursor.index && row.id > cursor.id);

/**
 * The jobs of one send, a lane per endpoint class (runner/lanes.ts). A lane walks the ledger's
 * jobs ready to send a window at a time, and takes besides the jobs that become ready while the
 * send goes on (`push`: a dependent whose last input is done), so no step waits for another to
 * finish. The send ends once every lane is idle and, after `quiet`, still is: no submit or
 * result in flight can make another job ready. No row is handed out twice: a row pushed while
 * it is ahead of a lane's walk is left to the walk, and one already in hand is not taken again.
 */
export class SendFeed {
  readonly #lanes: FeedLane[] = [];
  readonly #quiet: Quiet;
  readonly #through: number | undefined;
  /** Grows with every change a lane makes: an end judged before it is judged again. */
  #epoch = 0;
  #ended = false;
  #looking = false;

  constructor(parts: { quiet: Quiet; stop: AbortSignal; through?: number | undefined }) {
    this.#quiet = parts.quiet;
    this.#through = parts.through;
    parts.stop.addEventListener('abort', () => this.#end(), { once: true });
    if (parts.stop.aborted) this.#end();
  }

  /** A lane for `cls`, walking `read`'s windows; without one it only takes what is pushed. */
  lane(cls: PacedClass, read?: ReadWindow): Lane<JobRow> {
    const lane = new FeedLane(cls, read, this);
    this.#lanes.push(lane);
    return lane;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Jobs now ready to send, each to its class's lane (a lane closed, or a job past `through`, drops it). */
  push(rows: readonly JobRow[]): void {
    for (const row of rows) {
      if (this.#through !== undefined && row.manifestIndex > this.#through) continue;
      this.#lanes.find((lane) => lane.cls === submitClassOf(row.type))?.push(row);
    }
  }

  changed(): void {
    this.#epoch += 1;
  }

  /**
   * Every lane idle: once what is in flight is quiet, and no lane moved meanwhile, the send ends.
   * One look at a time: lanes go idle between pushes thousands of times while results come in.
   */
  async idle(): Promise<void> {
    if (this.#looking) return;
    this.#looking = true;
    try {
      while (!this.#ended && this.#allIdle()) {
        const epoch = this.#epoch;
        // A failure here is the run's own to report (its guard): the lanes end with the stop it makes.
        await this.#quiet().catch(() => undefined);
        if (epoch === this.#epoch && this.#allIdle()) this.#end();
      }
    } finally {
      this.#looking = false;
    }
  }

  #allIdle(): boolean {
    return this.#lanes.every((lane) => lane.idle);
  }

  #end(): void {
    this.#ended = true;
    for (const lane of this.#lanes) lane.wake(false);
  }
}

class FeedLane implements Lane<JobRow> {
  readonly cls: PacedClass;
  readonly #feed: SendFeed;
  #read: ReadWindow | undefined;
  #cursor: JobCursor = { index: Number.MIN_SAFE_INTEGER, id: '' };
  #window: JobRow[] = [];
  #pushed: JobRow[] = [];
  /** Pushed while a window was being read: judged against that window once it is in. */
  #whileReading: JobRow[] | undefined;
  /** Rows in the window, pushed, or taken and not over: pushed again, they are dropped. */
  readonly #held = new Set<string>();
  #waiters: ((more: boolean) => void)[] = [];
  #idle = false;
  #closed = false;

  constructor(cls: PacedClass, read: ReadWindow | undefined, feed: SendFeed) {
    this.cls = cls;
    this.#read = read;
    this.#feed = feed;
  }

  get idle(): boolean {
    return this.#closed || this.#idle;
  }

  async take(): Promise<JobRow | undefined> {
    // A window whose rows are all in hand already is passed over for the next.
    while (this.#pushed.length === 0 && this.#window.length === 0 && this.#read !== undefined) {
      await this.#readWindow(this.#read);
    }
    const row = this.#closed ? undefined : (this.#pushed.shift() ?? this.#window.shift());
    if (row !== undefined) {
      this.#idle = false;
      this.#feed.changed();
    }
    return row;
  }

  wait(idle: boolean): Promise<boolean> {
    if (this.#feed.ended || this.#closed) return Promise.resolve(false);
    if (this.#pushed.length > 0 || this.#window.length > 0) return Promise.resolve(true);
    this.#idle = idle;
    const more = new Promise<boolean>((resolve) => this.#waiters.push(resolve));
    if (idle) void this.#feed.idle();
    return more;
  }

  settled(row: JobRow, again: boolean): void {
    if (!again) this.#held.delete(row.id);
    this.#feed.changed();
    this.wake(true);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#read = undefined;
    this.#window = [];
    this.#pushed = [];
    this.#held.clear();
    this.wake(false);
    void this.#feed.idle();
  }

  push(row: JobRow): void {
    if (this.#closed || this.#held.has(row.id)) return;
    if (this.#whileReading !== undefined) {
      this.#whileReading.push(row);
      return;
    }
    // Ahead of the walk, it is read in its turn: a ready row is in the walk's query.
    if (this.#read !== undefined && isAfter(row, this.#cursor)) return;
    this.#held.add(row.id);
    this.#pushed.push(row);
    this.#idle = false;
    this.#feed.changed();
    this.wake(true);
  }

  wake(more: boolean): void {
    for (const resolve of this.#waiters.splice(0)) resolve(more);
  }

  async #readWindow(read: ReadWindow): Promise<void> {
    this.#whileReading = [];
    try {
      const rows = await read(this.#cursor, WINDOW_ROWS);
      this.#window = rows.filter((row) => !this.#held.has(row.id));
      for (const row of this.#window) this.#held.add(row.id);
      const last = rows.at(-1);
      if (last !== undefined) this.#cursor = { index: last.manifestIndex, id: last.id };
      if (rows.length < WINDOW_ROWS) this.#read = undefined;
    } finally {
      const pushed = this.#whileReading;
      this.#whileReading = undefined;
      for (const row of pushed) this.push(row);
    }
  }
}
