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
