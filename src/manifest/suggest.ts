/** Edit distance (insert, delete, substitute), case-insensitive: typos in slugs are often case. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/**
 * Candidates that look like `given`: within a third of its length in edits, or containing it
 * (or contained in it) ignoring case. Closest first, at most `limit`.
 */
export function closest(given: string, candidates: readonly string[], limit = 3): string[] {
  const lower = given.toLowerCase();
  const maxDistance = Math.max(1, Math.floor(given.length / 3));
  return candidates
    .map((candidate) => ({ candidate, distance: editDistance(given, candidate) }))
    .filter(({ candidate, distance }) => {
      const other = candidate.toLowerCase();
      return distance <= maxDistance || (lower.length >= 3 && (other.includes(lower) || lower.includes(other)));
    })
    .sort((a, b) => a.distance - b.distance)
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}

/** `"a", "b" or "c"` */
export function quotedList(items: readonly string[], conjunction = 'or'): string {
  const quoted = items.map((item) => `"${item}"`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} ${conjunction} ${quoted[quoted.length - 1] ?? ''}`;
}
