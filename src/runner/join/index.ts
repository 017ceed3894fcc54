/**
 * Joining the parts of a split job (`split: sentences`) into the one result the user asked for,
 * where the format allows it exactly, and the playlist written either way (docs/sources.md).
 */
import { joinMp3 } from './mp3.js';
import type { JoinOutcome } from './parts.js';
import { joinWav } from './wav.js';

export { joinMp3, joinWav, type JoinOutcome };

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
