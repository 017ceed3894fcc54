/**
 * What joining a job's parts came to: the joined file written, or why the parts cannot be joined
 * exactly (then only the playlist is written). I/O failures are thrown, not returned.
 */
export type JoinOutcome = { joined: true; bytes: number } | { joined: false; reason: string };

export function refused(reason: string): JoinOutcome {
  return { joined: false, reason };
}

/** `part 2 (ch-01.p002.wav)`: how a message names a part. */
export function partName(index: number, path: string): string {
  return `part ${index + 1} (${path.split(/[\\/]/).pop() ?? path})`;
}
