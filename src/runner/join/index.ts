/**
 * Joining the parts of a split job (`split: sentences`) into the one result the user asked for,
 * where the format allows it exactly, and the playlist written either way (docs/sources.md).
 */
import { joinMp3 } from './mp3.js';
import type { JoinOutcome } from './outcome.js';
import { joinWav } from './wav.js';

/** Result formats whose parts join into one file exactly; any other (flac, …) gets the playlist only. */
export const JOINABLE_FORMATS = ['wav', 'mp3'] as const;

/** Whether parts with this extension (`wav`, `.mp3`, any case) are joined. */
export function joinsExactly(extension: string): boolean {
  return (JOINABLE_FORMATS as readonly string[]).includes(extension.replace(/^\./, '').toLowerCase());
}

/** Joins parts of one format into `outPath`, or says why not (a format that does not join is refused too). */
export function joinParts(extension: string, partPaths: readonly string[], outPath: string): Promise<JoinOutcome> {
  const format = extension.replace(/^\./, '').toLowerCase();
  if (format === 'wav') return joinWav(partPaths, outPath);
  if (format === 'mp3') return joinMp3(partPaths, outPath);
  return Promise.resolve({ joined: false, reason: `${format} parts are not joined (only ${JOINABLE_FORMATS.join(' and ')} join exactly); the playlist lists them` });
}

export { joinMp3 } from './mp3.js';
export { playlistText } from './m3u.js';
export type { JoinOutcome } from './outcome.js';
export { joinWav } from './wav.js';
