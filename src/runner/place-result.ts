import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** `<id>~2.<ext>` … `<id>~99.<ext>`: `~` is never in a job id, so no job's own name is taken. */
const MAX_SUFFIX = 99;
/** Errors of a file system without hard links (FAT, some network shares): claim the name another way. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

export interface Placement {
  /**
   * The job already has a result (`run --redo`): that file is kept, and so is every file in the
   * way, even one with the new result's very bytes (a service may answer a redo with the same
   * bytes; the earlier result must stay a file of its own). The cost: a crash between the move
   * and the ledger's commit leaves one extra copy beside the result the next run saves.
   */
  generatedAgain: boolean;
}

/**
 * Moves a checked `.part` file to `target` (`<out>/<id>.<ext>`) and returns where it went. A
 * file already there is never replaced. One with the same bytes is taken as the result (a
 * crash after the move, before the ledger heard of it), unless the job is generated again; any
 * other is someone's own file, or an earlier result: the result goes to `<id>~2.<ext>`, `~3` ….
 * Each name is claimed atomically (a hard link fails if the name exists), so a file appearing
 * meanwhile is never overwritten either.
 */
export async function placeResult(partPath: string, target: string, sha256: string, placement: Placement): Promise<string> {
  for (let n = 1; n <= MAX_SUFFIX; n += 1) {
    const candidate = nameBeside(target, n);
    if (await claim(partPath, candidate)) {
      await rm(partPath, { force: true });
      return candidate;
    }
    if (!placement.generatedAgain && (await sha256Of(candidate)) === sha256) {
      await rm(partPath, { force: true });
      return candidate;
    }
  }
  throw new Error(`${target} and ${MAX_SUFFIX - 1} numbered names beside it are all taken by other files; move some aside`);
}

/**
 * Where placeResult put a file of these bytes for `target`, if it did: the first of its names
 * that holds them, looked for up to the first name no file has.
 */
export async function findPlaced(target: string, sha256: string): Promise<string | undefined> {
  for (let n = 1; n <= MAX_SUFFIX; n += 1) {
    const candidate = nameBeside(target, n);
    const found = await sha256Of(candidate);
    if (found === sha256) return candidate;
    if (found === undefined) return undefined;
  }
  return undefined;
}

function nameBeside(target: string, n: number): string {
  const { dir, name, ext } = path.parse(target);
  return n === 1 ? target : path.join(dir, `${name}~${n}${ext}`);
}

/** Makes `partPath`'s bytes appear at `candidate` only if no file has that name; false if one has. */
async function claim(partPath: string, candidate: string): Promise<boolean> {
  try {
    await link(partPath, candidate);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === undefined || !NO_HARD_LINKS.has(code)) throw error;
  }
  // Without hard links: an empty file created exclusively holds the name, then the complete
  // result replaces it in one rename, so the name never shows a partial result.
  try {
    await (await open(candidate, 'wx')).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  await rename(partPath, candidate);
  return true;
}

/** The sha256 of a file; undefined when it cannot be read as one (a folder, gone meanwhile). */
export async function sha256Of(file: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}
