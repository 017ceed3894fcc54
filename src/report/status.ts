import { escapeControlChars } from '../control-chars.js';
import { JOB_STATES, type JobState } from '../jobs/states.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { AMOUNTS, exactUsd, formatCount, markdownCell, markdownTable, paint, renderTable, tableOf } from './text.js';
import type { Column, Style, Table } from './text.js';
import { stepCountsTable, type StepFigures } from './steps.js';

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
  /** false for a job the manifest no longer lists (kept because it was paid for: its result, or one to collect). */
  inManifest?: boolean;
  /** What the service said of a failure: trying again may work, and nothing was charged. */
  retryable?: boolean | null;
  refunded?: boolean | null;
  tags?: readonly string[];
  /**
   * Why a `submitted` job is not simply running: the service finished it but its result was not
   * collected, or it could not say how the job is (404, unreachable). `error` holds the reason.
   */
  issue?: 'not_collected' | 'status_unknown' | null;
  /** In a manifest whose jobs take others' results: its step (1 when it takes none), its inputs by field. */
  step?: number | null;
  inputs?: Readonly<Record<string, string>> | null;
}

/** At most this many jobs of a group are listed; the rest are counted (`status --json` lists every job). */
export const LISTED_JOBS = 50;

/** The first jobs of a group (in manifest order) and how many it has in all. */
export interface ListedJobs {
  jobs: StatusJob[];
  total: number;
}

/** The run summary and `status`, read from the ledger by the caller (runner/reports.ts). */
export interface StatusSummary {
  counts: Record<Exclude<JobState, 'submitting' | 'blocked'>, number> & { submitting?: number; blocked?: number };
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  /** The groups that need a person: in doubt, failed, and submitted jobs a look left uncollected. */
  inDoubt: ListedJobs;
  failed: ListedJobs;
  /** Jobs waiting for an input that failed or was left out; `error` says which. */
  blocked: ListedJobs;
  notCollected: ListedJobs;
  statusUnknown: ListedJobs;
  /** Jobs here the manifest no longer lists (sent before it changed, collected and kept all the same). */
  dropped: ListedJobs;
  /** A manifest whose jobs take others' results: its jobs by step. */
  steps?: StepFigures | undefined;
  /** Where results are: how many files, and the folder of the first. */
  results: { files: number; folder: string | null };
}

/** A group of jobs that needs a person (or was dropped), as the text lists it. */
interface Section {
  group: 'inDoubt' | 'failed' | 'blocked' | 'notCollected' | 'statusUnknown' | 'dropped';
  title: string;
  style?: Style;
  why?: string;
  columns: readonly Column<StatusJob>[];
}

const column = (header: string, cell: (job: StatusJob) => string, right = false): Column<StatusJob> =>
  ({ header, cell, right });
const ID = column('id', (job) => job.id);
const TYPE = column('type', (job) => job.type);
const STATE = column('state', (job) => job.state);
const PRICE = column('price', (job) => (job.priceMicro === null ? '-' : formatUsd(job.priceMicro)), true);
const REQUEST = column('request id', (job) => job.requestId ?? '-');
const REASON = column('reason', (job) => oneLine(job.error));
const FAILURE = column('reason', (job) => oneLine(failureText(job)));
const RESULT_OR_REQUEST = column('result or request', (job) => oneLine(job.output ?? job.requestId));

// The service offers no way to look a lost request up, so only the person can decide.
const IN_DOUBT =
  'These requests may have reached the service and may have been paid: their price counts as spent.\n' +
  'They are never sent again automatically. Check your balance or billing first; to send them once\n' +
  'more, run again with --resubmit-in-doubt.';
const UNCOLLECTED =
  'The service finished these jobs, but their results could not be saved. They stay submitted:\n' +
  'every run tries to collect them again (nothing is sent or paid again).';
const STATUS_UNKNOWN =
  'These requests were sent, and may be paid for, but the service could not say how they are.\n' +
  'They stay submitted: every run asks again. Their request ids are the only handle on the results.';
const BLOCKED =
  'These jobs take another job\'s result, which failed or was left out: nothing was sent or reserved for them.\n' +
  'A run that sends that input again (--retries, --redo) sends them once it is done.';
const DROPPED =
  'They were sent (and paid for) before the manifest changed: they are collected, and their results kept, ' +
  'all the same.';

const REQUESTS = [ID, REQUEST, REASON];

const SECTIONS: readonly Section[] = [
  { group: 'inDoubt', title: 'In doubt', style: 'yellow', why: IN_DOUBT, columns: [ID, TYPE, PRICE, REASON] },
  { group: 'failed', title: 'Failed', style: 'red', columns: [ID, TYPE, FAILURE] },
  { group: 'blocked', title: 'Blocked', style: 'yellow', why: BLOCKED, columns: [ID, TYPE, REASON] },
  { group: 'notCollected', title: 'Paid, result not collected', style: 'yellow', why: UNCOLLECTED, columns: REQUESTS },
  { group: 'statusUnknown', title: 'Status unknown', style: 'yellow', why: STATUS_UNKNOWN, columns: REQUESTS },
  { group: 'dropped', title: 'No longer in the manifest', why: DROPPED, columns: [ID, STATE, RESULT_OR_REQUEST] },
];

/**
 * Counts, money, then what needs a person: jobs in doubt, failures, paid results not collected,
 * jobs whose status is unknown, jobs still running, results.
 */
export function formatStatusText(summary: StatusSummary, options: { color: boolean }): string {
  const { color } = options;
  const parts = [`Jobs by state\n${renderTable(stateCounts(summary), color)}`];
  if (summary.steps !== undefined) parts.push(`Jobs by step\n${renderTable(stepCountsTable(summary.steps), color)}`);
  parts.push(moneyLine(summary, color));
  for (const section of SECTIONS) {
    if (summary[section.group].total > 0) parts.push(sectionText(section, summary[section.group], color));
  }
  const notes = stateNotes(summary);
  if (notes.length > 0) parts.push(notes.join('\n'));
  parts.push(resultsLine(summary.results));
  return `${parts.join('\n\n')}\n`;
}

function sectionText({ title, style, why, columns }: Section, group: ListedJobs, color: boolean): string {
  const count = `${title}: ${formatCount(group.total)} job(s)`;
  const heading = style === undefined ? count : paint(color, style, count);
  const more = moreLine(group, 'mediabatch status --json lists every job');
  const table = renderTable(tableOf(columns, group.jobs), color) + more;
  return [heading, ...(why === undefined ? [] : [why]), table].join('\n');
}

/** `… and 1,234 more` under a table cut short, and where every job is. */
function moreLine(group: ListedJobs, where: string): string {
  const more = group.total - group.jobs.length;
  return more > 0 ? `\n  … and ${formatCount(more)} more (${where})` : '';
}

/** States listed only when a job is in them: a crash's leftovers, and a pipeline's waiting jobs. */
const WHEN_ANY: readonly JobState[] = ['submitting', 'blocked'];

/** A `state, jobs` row for every state; `submitting` and `blocked` only when a job is in them. */
function stateCounts(summary: StatusSummary): Table {
  const counts: Record<string, number | undefined> = summary.counts;
  const states = JOB_STATES.filter((state) => !WHEN_ANY.includes(state) || (counts[state] ?? 0) > 0);
  const rows = states.map((state) => [state, formatCount(counts[state] ?? 0)]);
  return { headers: ['state', 'jobs'], rows, align: ['left', 'right'] };
}

function moneyLine(summary: StatusSummary, color: boolean): string {
  if (summary.budgetMicro === null) return `Spent ${formatUsd(summary.spentMicro)} (no budget set)`;
  const leftMicro = summary.budgetMicro - summary.spentMicro;
  const line = `Spent ${formatUsd(summary.spentMicro)} of the ${formatUsd(summary.budgetMicro)} budget (${formatUsd(leftMicro)} left)`;
  return leftMicro < 0 ? paint(color, 'red', line) : line;
}

/** A failure's reason, and whether a later run sends it again (the service said so and refunded it). */
export function failureText(job: Pick<StatusJob, 'error' | 'retryable' | 'refunded'>): string | null {
  if (job.retryable === true && job.refunded === true) return `${job.error ?? 'failed at the service'} (retryable, refunded: a later run sends it again)`;
  return job.error;
}

/**
 * `status --state S,…` as a table: the jobs in those states, the first LISTED_JOBS of them, with
 * what a person looks for in each (a failure's reason, a result's file, a request id).
 */
export function formatStateListing(states: readonly string[], group: ListedJobs, options: { color: boolean }): string {
  const title = `Jobs ${states.join(', ')}: ${formatCount(group.total)}`;
  if (group.total === 0) return `${title}\n`;
  const found = column('reason, result or request', (job) =>
    oneLine(job.state === 'done' ? job.output : (failureText(job) ?? job.requestId)));
  const table = renderTable(tableOf([ID, TYPE, STATE, found], group.jobs), options.color);
  return `${title}\n${table}${moreLine(group, '--format ids, csv or jsonl lists every one')}\n`;
}

const LISTED_PER_LINE = 3;

/**
 * What is true of the submitted jobs, one line per group, for a run's last words: still running
 * at the service; done there but the result not collected; status unknown. Never "still
 * running" for a job the service said was done or did not know.
 */
export function submittedLines(summary: StatusSummary): string[] {
  const lines: string[] = [];
  const running = runningCount(summary);
  if (running > 0) lines.push(`${formatCount(running)} job(s) still running at the service`);
  if (summary.notCollected.total > 0) {
    lines.push(`${formatCount(summary.notCollected.total)} job(s) done at the service (paid for) but the result not collected: ${listed(summary.notCollected)}`);
  }
  if (summary.statusUnknown.total > 0) {
    lines.push(`${formatCount(summary.statusUnknown.total)} job(s) whose status is unknown: ${listed(summary.statusUnknown)}`);
  }
  return lines;
}

function runningCount(summary: StatusSummary): number {
  return summary.counts.submitted - summary.notCollected.total - summary.statusUnknown.total;
}

function listed(group: ListedJobs): string {
  const shown = group.jobs.slice(0, LISTED_PER_LINE).map((job) => `${job.id} (request ${job.requestId ?? '-'}): ${oneLine(job.error)}`);
  const more = group.total - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${formatCount(more)} more (mediabatch status lists them)` : shown.join('; ');
}

function stateNotes(summary: StatusSummary): string[] {
  const { counts } = summary;
  const notes: string[] = [];
  const running = runningCount(summary);
  if (running > 0) notes.push(`${formatCount(running)} job(s) still running at the service: run again to collect them.`);
  if ((counts.submitting ?? 0) > 0) {
    notes.push(`${formatCount(counts.submitting ?? 0)} job(s) were caught mid-submit: the next run marks them in doubt.`);
  }
  if (counts.skipped > 0) notes.push(`${formatCount(counts.skipped)} job(s) skipped by --partial because of the budget.`);
  if (counts.pending > 0) notes.push(`${formatCount(counts.pending)} job(s) not sent yet.`);
  return notes;
}

function resultsLine(results: StatusSummary['results']): string {
  if (results.files === 0 || results.folder === null) return 'No results downloaded yet.';
  return `Results: ${formatCount(results.files)} file(s) in ${results.folder}`;
}

/**
 * Error texts can span lines; a table row must not. A ledger written by an older mediabatch may
 * hold the service's text as it came: its control characters are escaped here too.
 */
function oneLine(text: string | null): string {
  return text === null || text === '' ? '-' : escapeControlChars(text.replace(/\s*\n\s*/g, ' '));
}

/** `status --format md`: counts, money, and the jobs that need a person. */
export function statusMarkdown(summary: StatusSummary, title: string): string {
  const parts = [
    `# Status: ${markdownCell(title)}`,
    `## Jobs by state\n\n${markdownTable(stateCounts(summary))}`,
    ...(summary.steps === undefined ? [] : [`## Jobs by step\n\n${markdownTable(stepCountsTable(summary.steps))}`]),
    `## Money\n\n${markdownTable({ ...AMOUNTS, rows: statusMoneyRows(summary) })}`,
  ];
  if (summary.inDoubt.total > 0) parts.push(jobSection('In doubt (may have been paid; sent again only with --resubmit-in-doubt)', summary.inDoubt));
  if (summary.failed.total > 0) parts.push(jobSection('Failed', summary.failed));
  if (summary.blocked.total > 0) parts.push(jobSection('Blocked (an input failed or was left out)', summary.blocked));
  return `${parts.join('\n\n')}\n`;
}

function statusMoneyRows(summary: StatusSummary): string[][] {
  const rows = [['Spent', exactUsd(summary.spentMicro)], ['Budget', summary.budgetMicro === null ? 'none' : exactUsd(summary.budgetMicro)]];
  if (summary.budgetMicro !== null) rows.push(['Left', exactUsd(summary.budgetMicro - summary.spentMicro)]);
  return rows;
}

const MARKDOWN_JOB_COLUMNS = [
  ID,
  TYPE,
  column('price', (job) => (job.priceMicro === null ? '' : exactUsd(job.priceMicro)), true),
  column('request id', (job) => job.requestId ?? ''),
  column('reason', (job) => job.error ?? ''),
];

/** A group's first jobs (StatusSummary keeps LISTED_JOBS of each) and how many more it has. */
function jobSection(title: string, group: ListedJobs): string {
  const more = group.total - group.jobs.length;
  const rest = more > 0 ? `\n\n…and ${formatCount(more)} more (every job is in the CSV).` : '';
  const table = markdownTable(tableOf(MARKDOWN_JOB_COLUMNS, group.jobs));
  return `## ${title}: ${formatCount(group.total)}\n\n${table}${rest}`;
}
