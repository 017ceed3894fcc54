import { ManifestError, type ManifestIssue } from './errors.js';

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

  /** The problems as a ManifestError, or undefined when there is none. */
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
