import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { JobRow, ListingLedger } from '../store/index.js';
import type { RunDeps } from './context.js';
import { joinMp3 } from './join/mp3.js';
import type { JoinOutcome } from './join/parts.js';
import { joinWav } from './join/wav.js';
import { findPlaced, placeResult, sha256Of } from './place-result.js';
import { describeError } from './run-errors.js';

/** Joining reads the parts and writes files; it changes nothing in the ledger. */
type JoinDeps = Pick<RunDeps, 'options' | 'stop' | 'emit'> & {
  ledger: Pick<ListingLedger, 'splitsDone' | 'readParts'>;
};

/** Split jobs read at once when a run looks for joins it has not written. */
const SWEEP_WINDOW = 500;

/** Result formats whose parts join into one file exactly; any other (flac, …) gets the playlist only. */
const JOINERS: Record<string, (partPaths: readonly string[], outPath: string) => Promise<JoinOutcome>> = {
  wav: joinWav,
  mp3: joinMp3,
};

const formatOf = (extension: string): string => extension.replace(/^\./, '').toLowerCase();

/** Whether parts with this extension (`wav`, `.mp3`, any case) are joined. */
export function joinsExactly(extension: string): boolean {
  return Object.hasOwn(JOINERS, formatOf(extension));
}

/** Joins parts of one format into `outPath`, or says why not (a format that does not join is refused too). */
export async function joinParts(extension: string, partPaths: readonly string[], outPath: string) {
  const format = formatOf(extension);
  const join = Object.hasOwn(JOINERS, format) ? JOINERS[format] : undefined;
  if (join !== undefined) return join(partPaths, outPath);
  const only = Object.keys(JOINERS).join(' and ');
  const reason = `${format} parts are not joined (only ${only} join exactly); the playlist lists them`;
  return { joined: false, reason } satisfies JoinOutcome;
}

/**
 * An M3U playlist of a job's parts, in order: `#EXTM3U`, then one name a line, relative to the
 * playlist's folder (the parts sit beside it), so the folder can be moved whole. Written for
 * every split job whether or not its parts joined: it is how players step through them.
 */
export function playlistText(partFileNames: readonly string[]): string {
  for (const name of partFileNames) {
    // A line break would start another entry; a job's file names never hold one.
    if (/[\r\n]/.test(name) || name === '') throw new RangeError(`not a playlist entry: ${JSON.stringify(name)}`);
  }
  return `#EXTM3U\n${partFileNames.map((name) => `${name}\n`).join('')}`;
}

/**
 * The parts of split jobs (`split: sentences`) put back together: once every part of a job is
 * done, `<out>/<id>.<ext>` is joined from them where the format joins exactly (WAV, MP3), and
 * `<out>/<id>.m3u` lists them either way; each is placed like a result, so a person's own file
 * of that name is kept and ours goes beside it (`<id>~2.m3u`). Joins of one run never overlap
 * for one job, and parts that are joined already are not joined again.
 */
export class SplitJoins {
  readonly #deps: JoinDeps;
  readonly #running = new Map<string, Promise<void>>();

  constructor(deps: JoinDeps) {
    this.#deps = deps;
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
    for (let after = ''; !this.#deps.stop.aborted; ) {
      const ids = await this.#deps.ledger.splitsDone(after, SWEEP_WINDOW);
      for (const id of ids) {
        if (this.#deps.stop.aborted) return;
        await this.partDone(id);
      }
      if (ids.length < SWEEP_WINDOW) return;
      after = ids.at(-1) ?? after;
    }
  }

  async #join(parentId: string): Promise<void> {
    const parts = await this.#deps.ledger.readParts(parentId);
    const paths = parts.map((part) => part.resultPath);
    if (parts.length === 0 || !parts.every((part) => part.state === 'done') || !paths.every((p): p is string => p !== null)) return;
    const { outDir } = this.#deps.options;
    try {
      const playlist = playlistText(paths.map((p) => path.relative(outDir, p)));
      const playlistSha256 = createHash('sha256').update(playlist).digest('hex');
      // Placed last, so it says these very parts were joined: parts done at the same moment, or
      // joined by an earlier run, are not joined again.
      const target = path.join(outDir, `${parentId}.m3u`);
      if ((await findPlaced(target, playlistSha256)) !== undefined) return;
      await this.#joinFiles(parentId, parts, paths);
      const placed = await placeText(path.join(outDir, `${parentId}~m3u`), playlist, target, playlistSha256);
      if (placed !== target) {
        this.#deps.emit({ kind: 'warning', message: `job "${parentId}": ${target} was not written by mediabatch, so it is kept as it is; the playlist is saved as ${placed}` });
      }
    } catch (error) {
      this.#deps.emit({ kind: 'warning', message: `job "${parentId}": its ${parts.length} parts are done but could not be joined (${describeError(error)}); the next run tries again` });
    }
  }

  async #joinFiles(parentId: string, parts: readonly JobRow[], paths: readonly string[]): Promise<void> {
    const extensions = new Set(paths.map((p) => path.extname(p).slice(1).toLowerCase()));
    const [extension] = extensions;
    if (extensions.size !== 1 || extension === undefined) {
      this.#deps.emit({ kind: 'warning', message: `job "${parentId}": its parts came back in different formats (${[...extensions].join(', ')}), so they are not joined; ${parentId}.m3u lists them` });
      return;
    }
    if (!joinsExactly(extension)) return;
    const { outDir } = this.#deps.options;
    // `~` is never in an id: no result has this name.
    const scratch = path.join(outDir, `${parentId}~join`);
    const outcome = await joinParts(extension, paths, scratch);
    if (!outcome.joined) {
      this.#deps.emit({ kind: 'warning', message: `job "${parentId}": its parts were not joined (${outcome.reason}); ${parentId}.m3u lists them` });
      return;
    }
    try {
      const sha256 = await sha256Of(scratch);
      if (sha256 === undefined) throw new Error(`the joined file ${scratch} could not be read back`);
      const placed = await placeResult(scratch, path.join(outDir, `${parentId}.${extension}`), sha256, { generatedAgain: false });
      this.#deps.emit({ kind: 'joined', id: parentId, path: placed, parts: parts.length, bytes: outcome.bytes });
    } finally {
      await rm(scratch, { force: true });
    }
  }
}

/** Writes `text` to `scratch`, then places it at `target` (or beside a file already there): where it went. */
async function placeText(scratch: string, text: string, target: string, sha256: string): Promise<string> {
  try {
    await writeFile(scratch, text, 'utf8');
    return await placeResult(scratch, target, sha256, { generatedAgain: false });
  } finally {
    await rm(scratch, { force: true });
  }
}

/** A split job that cannot be joined: some of its parts failed for good. */
export interface UnjoinedSplit {
  id: string;
  /** Its parts that failed and that no run sends again by itself (`--redo` sends them alone). */
  failedParts: string[];
}

/** Failed jobs read when looking for the splits they keep from being joined. */
const UNJOINED_WINDOW = 500;

/**
 * The split jobs, among the first UNJOINED_WINDOW failed jobs of the manifest, that a part which
 * failed for good keeps from being joined (a failure the service called retryable and refunded
 * is sent again by the next run).
 */
export async function unjoinedSplits(ledger: Pick<ListingLedger, 'readJobs'>): Promise<UnjoinedSplit[]> {
  const failed = await ledger.readJobs({ scope: 'manifest', states: ['failed'], limit: UNJOINED_WINDOW });
  const byParent = new Map<string, string[]>();
  for (const row of failed) {
    if (row.parentId == null || (row.retryable === true && row.refunded === true)) continue;
    const parts = byParent.get(row.parentId);
    if (parts === undefined) byParent.set(row.parentId, [row.id]);
    else parts.push(row.id);
  }
  return [...byParent].map(([id, failedParts]) => ({ id, failedParts }));
}
