import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';

/** Closes a half-written output and removes it, so no partial join is ever left to look finished. */
export async function discard(out: WriteStream, path: string): Promise<void> {
  if (!out.closed) {
    const closed = once(out, 'close').catch(() => undefined);
    out.destroy();
    await closed;
  }
  await rm(path, { force: true });
}
