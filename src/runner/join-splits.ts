import { access, rm } from 'node:fs/promises';
import path from 'node:path';
import type { JobRow } from '../store/index.js';
import type { RunContext } from './context.js';
import { joinParts, joinsExactly, writeM3u } from './join/index.js';
import { placeResult, sha256Of } from './place-result.js';
import { describeError } from './run-errors.js';

/** Split jobs read at once when a run looks for joins it has not written. */
const SWEEP_WINDOW = 500;

/**
 * The parts of split jobs (`split: sentences`) put back together: once every part of a job is
 * done, `<out>/<id>.<ext>` is joined from them where the format joins exactly (WAV, MP3), and
 * `<out>/<id>.m3u` lists them either way. Joins of one run never overlap for one job.
 */
export class SplitJoins {
  readonly #ctx: RunContext;
  readonly #running = new Map<string, Promise<void>>();

  constructor(ctx: RunContext) {
    this.#ctx = ctx;
  }

  /** A part is done: joins its job if that was the last part. */
  partDone(parentId: string): Promise<void> {
    const earlier = this.#running.get(parentId) ?? Promise.resolve();
    const next = earlier.then(() => this.#join(parentId));
    this.#running.set(parentId, next);
    return next.finally(() => {
      if (this.#running.get(parentId) === next) this.#running.delete(parentId);
    });
  }

  /**
   * Every split job whose parts are all done and whose playlist is missing: a run that stopped
   * between a last part and its join, or parts collected by a run before this one.
   */
  async sweep(): Promise<void> {
    for (let after = ''; !this.#ctx.stop.aborted; ) {
      const ids = await this.#ctx.ledger.splitsDone(after, SWEEP_WINDOW);
      for (const id of ids) {
        if (this.#ctx.stop.aborted) return;
        if (!(await exists(playlistPath(this.#ctx, id)))) await this.partDone(id);
      }
      if (ids.length < SWEEP_WINDOW) return;
      after = ids.at(-1) ?? after;
    }
  }

  async #join(parentId: string): Promise<void> {
    const parts = await this.#ctx.ledger.readParts(parentId);
    const paths = parts.map((part) => part.resultPath);
    if (parts.length === 0 || !parts.every((part) => part.state === 'done') || !paths.every((p): p is string => p !== null)) return;
    try {
      await this.#joinFiles(parentId, parts, paths);
      // Written last: a playlist says the job was joined (sweep).
      await writeM3u(playlistPath(this.#ctx, parentId), paths.map((p) => path.relative(this.#ctx.options.outDir, p)));
    } catch (error) {
      this.#ctx.emit({ kind: 'warning', message: `job "${parentId}": its ${parts.length} parts are done but could not be joined (${describeError(error)}); the next run tries again` });
    }
  }

  async #joinFiles(parentId: string, parts: readonly JobRow[], paths: readonly string[]): Promise<void> {
    const extensions = new Set(paths.map((p) => path.extname(p).slice(1).toLowerCase()));
    const [extension] = extensions;
    if (extensions.size !== 1 || extension === undefined) {
      this.#ctx.emit({ kind: 'warning', message: `job "${parentId}": its parts came back in different formats (${[...extensions].join(', ')}), so they are not joined; ${parentId}.m3u lists them` });
      return;
    }
    if (!joinsExactly(extension)) return;
    const { outDir } = this.#ctx.options;
    // `~` is never in an id: no result has this name.
    const scratch = path.join(outDir, `${parentId}~join`);
    const outcome = await joinParts(extension, paths, scratch);
    if (!outcome.joined) {
      this.#ctx.emit({ kind: 'warning', message: `job "${parentId}": its parts were not joined (${outcome.reason}); ${parentId}.m3u lists them` });
      return;
    }
    try {
      const sha256 = await sha256Of(scratch);
      if (sha256 === undefined) throw new Error(`the joined file ${scratch} could not be read back`);
      const placed = await placeResult(scratch, path.join(outDir, `${parentId}.${extension}`), sha256, { generatedAgain: false });
      this.#ctx.emit({ kind: 'joined', id: parentId, path: placed, parts: parts.length, bytes: outcome.bytes });
    } finally {
      await rm(scratch, { force: true });
    }
  }
}

function playlistPath(ctx: RunContext, parentId: string): string {
  return path.join(ctx.options.outDir, `${parentId}.m3u`);
}

function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
