import { ExitCode, MediabatchError } from '../errors.js';

/**
 * One problem found in a manifest. `file` is the manifest path as the user gave it, so a message
 * can be pasted back into a shell or clicked in an editor. `jobIndex` is 0-based; messages show it
 * 1-based. `message` is the whole readable text after the field; `expected`/`got`/`hint` repeat its
 * parts for `--json` consumers.
 */
export interface ManifestIssue {
  file: string;
  line: number;
  col: number;
  jobIndex?: number;
  jobId?: string;
  field?: string;
  /** The value came from `defaults.<type>`: the position points there. */
  fromDefaults?: boolean;
  message: string;
  expected?: string;
  got?: string;
  hint?: string;
}

const GOT_MAX_CHARS = 60;
const JOB_LABEL_MAX_CHARS = 40;
const FIELD_MAX_CHARS = 60;

// Control characters, bidi overrides and lone surrogates: printed as they are, an id or key from
// the manifest could break the one-line-per-issue layout or drive the terminal (ANSI escapes).
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A name taken from the manifest (job id, key, anchor) as a message shows it: escaped, cut short. */
export function printable(text: string, max: number): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return short.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A value as a message shows it: JSON-ish, `nothing` for a missing one, cut at ~60 characters. */
export function formatGot(value: unknown): string {
  if (value === undefined) return 'nothing';
  // JSON would write null for Infinity and NaN, and throws on a bigint.
  if (typeof value === 'bigint' || (typeof value === 'number' && !Number.isFinite(value))) return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return printable(text, GOT_MAX_CHARS);
}

/** `expected X, got Y` — the message body shared by most issues. */
export function expectedGot(expected: string, got: string): Pick<ManifestIssue, 'message' | 'expected' | 'got'> {
  return { message: `expected ${expected}, got ${got}`, expected, got };
}

/** `file:line:col job "id" (#N) field (from defaults): message; hint` */
export function formatIssue(issue: ManifestIssue): string {
  const parts = [`${issue.file}:${issue.line}:${issue.col}`];
  const label = issue.jobId === undefined ? undefined : `"${printable(issue.jobId, JOB_LABEL_MAX_CHARS)}"`;
  // An inline job is also job #n of `jobs:`; a source's row is found by its file and line.
  if (issue.jobIndex !== undefined) parts.push(`job ${label === undefined ? '' : `${label} `}(#${issue.jobIndex + 1})`);
  else if (label !== undefined) parts.push(`job ${label}`);
  if (issue.field !== undefined) {
    parts.push(`${printable(issue.field, FIELD_MAX_CHARS)}${issue.fromDefaults === true ? ' (from defaults)' : ''}:`);
  }
  parts.push(issue.message);
  const line = parts.join(' ');
  return issue.hint === undefined ? line : `${line}; ${issue.hint}`;
}

function summary(issues: readonly ManifestIssue[], total: number): string {
  const files = [...new Set(issues.map((issue) => issue.file))].join(', ');
  const count = total === 1 ? '1 problem' : `${total.toLocaleString('en-US')} problems`;
  const shown = total > issues.length ? ` (the first ${issues.length} shown)` : '';
  return `${count}${shown} in ${files}; nothing was sent.`;
}

/**
 * Every problem of a manifest at once; the message lists them sorted by position. A manifest
 * with more problems than are worth showing passes the ones kept and the `total`.
 */
export class ManifestError extends MediabatchError {
  readonly issues: ManifestIssue[];
  /** How many problems were found; `issues` may hold only the first of them. */
  readonly total: number;

  constructor(issues: readonly ManifestIssue[], cause?: unknown, total = issues.length) {
    // By file, then position; stable, so issues at one spot keep the order they were found in.
    const sorted = [...issues].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.col - b.col));
    super([...sorted.map(formatIssue), summary(sorted, total)].join('\n'), {
      code: 'E_MANIFEST',
      exitCode: ExitCode.usage,
      cause,
    });
    this.issues = sorted;
    this.total = total;
  }
}


/** Problems kept to show; past this, only counted: a million bad rows must not fill memory or a screen. */
export const SHOWN_ISSUES = 200;

/**
 * Every problem of a manifest, gathered as its jobs stream by: the first SHOWN_ISSUES kept,
 * the rest counted. A problem caused by a value in `defaults` is reported once, with how many
 * more jobs it affects (thousands of jobs take one default).
 */
export class IssueCollector {
  readonly #kept: ManifestIssue[] = [];
  readonly #fromDefaults = new Map<string, { issue: ManifestIssue; more: number }>();
  #count = 0;

  add(issue: ManifestIssue): void {
    if (issue.fromDefaults === true) {
      const key = `${issue.file}:${issue.line}:${issue.col}:${issue.field ?? ''}:${issue.message}`;
      const seen = this.#fromDefaults.get(key);
      if (seen !== undefined) {
        seen.more += 1;
        return;
      }
      const copy = { ...issue };
      this.#fromDefaults.set(key, { issue: copy, more: 0 });
      this.#keep(copy);
      return;
    }
    this.#keep(issue);
  }

  addAll(issues: Iterable<ManifestIssue>): void {
    for (const issue of issues) this.add(issue);
  }

  error(): ManifestError | undefined {
    if (this.#count === 0) return undefined;
    for (const { issue, more } of this.#fromDefaults.values()) {
      if (more === 0 || issue.hint?.includes('using this default') === true) continue;
      const also = `the same for ${more} more job${more === 1 ? '' : 's'} using this default`;
      issue.hint = issue.hint === undefined ? also : `${issue.hint}; ${also}`;
    }
    return new ManifestError(this.#kept, undefined, this.#count);
  }

  #keep(issue: ManifestIssue): void {
    this.#count += 1;
    if (this.#kept.length < SHOWN_ISSUES) this.#kept.push(issue);
  }
}

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
