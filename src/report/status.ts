import path from 'node:path';
import { escapeControlChars } from '../control-chars.js';
import { JOB_STATES, type JobState } from '../jobs/states.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { formatCount, paint, renderTable } from './text.js';

export interface StatusJob {
  id: string;
  type: string;
  model?: string | null;
  priceSource?: string | null;
  state: string;
  requestId: string | null;
  priceMicro: MicroUsd | null;
  /** Path of the downloaded result. */
  output: string | null;
  error: string | null;
  /** false for a job the manifest no longer lists (kept because its result is still to collect). */
  inManifest?: boolean;
  /**
   * Why a `submitted` job is not simply running: the service finished it but its result was not
   * collected, or it could not say how the job is (404, unreachable). `error` holds the reason.
   */
  issue?: CollectIssue | null;
  /** The job's tags from the manifest; none until the ledger records them. */
  tags?: readonly string[] | undefined;
}

export type CollectIssue = 'not_collected' | 'status_unknown';

/** The run summary and `status`, read from the ledger by the caller. */
export interface StatusSummary {
  counts: Record<Exclude<JobState, 'submitting'>, number> & { submitting?: number };
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  jobs: StatusJob[];
}

/** The submitted jobs by what the last look at them found: running, or left with an issue. */
export function submittedGroups(jobs: readonly StatusJob[]): Record<CollectIssue | 'running', StatusJob[]> {
  const groups: Record<CollectIssue | 'running', StatusJob[]> = { running: [], not_collected: [], status_unknown: [] };
  for (const job of jobs) if (job.state === 'submitted') groups[job.issue ?? 'running'].push(job);
  return groups;
}

/**
 * Counts, money, then what needs a person: jobs in doubt, failures, paid results not collected,
 * jobs whose status is unknown, jobs still running, results.
 */
export function formatStatusText(summary: StatusSummary, options: { color: boolean }): string {
  const { color } = options;
  const parts = [countsTable(summary, color), moneyLine(summary, color)];
  const inDoubt = summary.jobs.filter((job) => job.state === 'in_doubt');
  const failed = summary.jobs.filter((job) => job.state === 'failed');
  const submitted = submittedGroups(summary.jobs);
  if (inDoubt.length > 0) parts.push(inDoubtSection(inDoubt, color));
  if (failed.length > 0) parts.push(failedSection(failed, color));
  if (submitted.not_collected.length > 0) parts.push(notCollectedSection(submitted.not_collected, color));
  if (submitted.status_unknown.length > 0) parts.push(statusUnknownSection(submitted.status_unknown, color));
  const notes = stateNotes(summary);
  if (notes.length > 0) parts.push(notes.join('\n'));
  parts.push(resultsLine(summary.jobs));
  return `${parts.join('\n\n')}\n`;
}

function countsTable(summary: StatusSummary, color: boolean): string {
  const counts: Record<string, number | undefined> = summary.counts;
  const rows = JOB_STATES.filter((state) => state !== 'submitting' || (counts[state] ?? 0) > 0).map((state) => [
    state,
    formatCount(counts[state] ?? 0),
  ]);
  return `Jobs by state\n${renderTable({ headers: ['state', 'jobs'], rows, align: ['left', 'right'], color })}`;
}

function moneyLine(summary: StatusSummary, color: boolean): string {
  if (summary.budgetMicro === null) return `Spent ${formatUsd(summary.spentMicro)} (no budget set)`;
  const leftMicro = summary.budgetMicro - summary.spentMicro;
  const line = `Spent ${formatUsd(summary.spentMicro)} of the ${formatUsd(summary.budgetMicro)} budget (${formatUsd(leftMicro)} left)`;
  return leftMicro < 0 ? paint(color, 'red', line) : line;
}

function inDoubtSection(jobs: readonly StatusJob[], color: boolean): string {
  const title = paint(color, 'yellow', `In doubt: ${formatCount(jobs.length)} job(s)`);
  // The service offers no way to look a lost request up, so only the person can decide.
  const why =
    'These requests may have reached the service and may have been paid: their price counts as spent.\n' +
    'They are never sent again automatically. Check your balance or billing first; to send them once\n' +
    'more, run again with --resubmit-in-doubt.';
  const table = renderTable({
    headers: ['id', 'type', 'price', 'reason'],
    rows: jobs.map((job) => [job.id, job.type, job.priceMicro === null ? '-' : formatUsd(job.priceMicro), oneLine(job.error)]),
    align: ['left', 'left', 'right'],
    color,
  });
  return `${title}\n${why}\n${table}`;
}

function failedSection(jobs: readonly StatusJob[], color: boolean): string {
  const title = paint(color, 'red', `Failed: ${formatCount(jobs.length)} job(s)`);
  const table = renderTable({
    headers: ['id', 'type', 'reason'],
    rows: jobs.map((job) => [job.id, job.type, oneLine(job.error)]),
    color,
  });
  return `${title}\n${table}`;
}

const LISTED_PER_LINE = 3;

/**
 * What is true of the submitted jobs, one line per group, for a run's last words: still running
 * at the service; done there but the result not collected; status unknown. Never "still
 * running" for a job the service said was done or did not know.
 */
export function submittedLines(jobs: readonly StatusJob[]): string[] {
  const groups = submittedGroups(jobs);
  const lines: string[] = [];
  if (groups.running.length > 0) lines.push(`${formatCount(groups.running.length)} job(s) still running at the service`);
  if (groups.not_collected.length > 0) {
    lines.push(`${formatCount(groups.not_collected.length)} job(s) done at the service (paid for) but the result not collected: ${listed(groups.not_collected)}`);
  }
  if (groups.status_unknown.length > 0) {
    lines.push(`${formatCount(groups.status_unknown.length)} job(s) whose status is unknown: ${listed(groups.status_unknown)}`);
  }
  return lines;
}

function listed(jobs: readonly StatusJob[]): string {
  const shown = jobs.slice(0, LISTED_PER_LINE).map((job) => `${job.id} (request ${job.requestId ?? '-'}): ${oneLine(job.error)}`);
  const more = jobs.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${formatCount(more)} more (mediabatch status lists them)` : shown.join('; ');
}

function notCollectedSection(jobs: readonly StatusJob[], color: boolean): string {
  const title = paint(color, 'yellow', `Paid, result not collected: ${formatCount(jobs.length)} job(s)`);
  const why =
    'The service finished these jobs, but their results could not be saved. They stay submitted:\n' +
    'every run tries to collect them again (nothing is sent or paid again).';
  return `${title}\n${why}\n${requestTable(jobs, color)}`;
}

function statusUnknownSection(jobs: readonly StatusJob[], color: boolean): string {
  const title = paint(color, 'yellow', `Status unknown: ${formatCount(jobs.length)} job(s)`);
  const why =
    'These requests were sent, and may be paid for, but the service could not say how they are.\n' +
    'They stay submitted: every run asks again. Their request ids are the only handle on the results.';
  return `${title}\n${why}\n${requestTable(jobs, color)}`;
}

function requestTable(jobs: readonly StatusJob[], color: boolean): string {
  return renderTable({
    headers: ['id', 'request id', 'reason'],
    rows: jobs.map((job) => [job.id, job.requestId ?? '-', oneLine(job.error)]),
    color,
  });
}

function stateNotes(summary: StatusSummary): string[] {
  const { counts } = summary;
  const notes: string[] = [];
  const left = submittedGroups(summary.jobs);
  const running = counts.submitted - left.not_collected.length - left.status_unknown.length;
  if (running > 0) notes.push(`${formatCount(running)} job(s) still running at the service: run again to collect them.`);
  const dropped = summary.jobs.filter((job) => job.inManifest === false).length;
  if (dropped > 0) {
    notes.push(`${formatCount(dropped)} job(s) here are no longer in the manifest: they were sent (and paid for) before it changed, and are collected all the same.`);
  }
  if ((counts.submitting ?? 0) > 0) {
    notes.push(`${formatCount(counts.submitting ?? 0)} job(s) were caught mid-submit: the next run marks them in doubt.`);
  }
  if (counts.skipped > 0) notes.push(`${formatCount(counts.skipped)} job(s) skipped by --partial because of the budget.`);
  if (counts.pending > 0) notes.push(`${formatCount(counts.pending)} job(s) not sent yet.`);
  return notes;
}

/** Where results are: one folder when they share it, else the count of files. */
function resultsLine(jobs: readonly StatusJob[]): string {
  const outputs = jobs.map((job) => job.output).filter((output): output is string => output !== null && output !== '');
  if (outputs.length === 0) return 'No results downloaded yet.';
  const folders = new Set(outputs.map((output) => path.dirname(output)));
  const [only] = folders;
  return folders.size === 1 && only !== undefined
    ? `Results: ${formatCount(outputs.length)} file(s) in ${only}`
    : `Results: ${formatCount(outputs.length)} file(s) in ${formatCount(folders.size)} folders (see the CSV report)`;
}

/**
 * Error texts can span lines; a table row must not. A ledger written by an older mediabatch may
 * hold the service's text as it came: its control characters are escaped here too.
 */
function oneLine(text: string | null): string {
  return text === null || text === '' ? '-' : escapeControlChars(text.replace(/\s*\n\s*/g, ' '));
}
