import { escapeControlChars } from '../control-chars.js';
import { decimalUsd, type MicroUsd } from '../money.js';
import type { CostReport } from '../pricing/report.js';
import type { GroupSummary } from '../pricing/types.js';
import { moneyRows, priceCallsText, totalsTable } from './cost-report.js';
import { groupParameters, groupSource, groupVoice } from './csv.js';
import { stateCountRows, type ListedJobs, type StatusJob, type StatusSummary } from './status.js';
import { formatCount, tableOf, type Column, type Table } from './text.js';

/**
 * Markdown for a pull request or a finance ticket: totals, breakdowns, budget and balance, with
 * money exact to the micro-dollar (`$0.000077`, `$12.50`). Never a line per job: a ticket cannot
 * hold a million rows, and the CSV files have them.
 */

/** Exact dollars, at least two decimals: `$12.50`, `$0.000077`, `-$0.25`. */
export function exactUsd(micro: MicroUsd): string {
  const text = decimalUsd(Math.abs(micro));
  const [whole, fraction = ''] = text.split('.');
  return `${micro < 0 ? '-' : ''}$${whole}.${fraction.padEnd(2, '0')}`;
}

/** A table cell: one line, no `|` to split it, no control character to hide text. */
function cell(text: string): string {
  return escapeControlChars(text.replace(/\s*\n\s*/g, ' ')).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
}

/** A text or markdown table as markdown: every header row and cell escaped, numbers and money right-aligned. */
function markdownTable({ headers = [], rows, align = [] }: Table): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const rule = headers.map((_, i) => (align[i] === 'right' ? '---:' : '---'));
  return [line(headers.map(cell)), line(rule), ...rows.map((row) => line(row.map(cell)))].join('\n');
}

const GROUP_COLUMNS: Column<GroupSummary>[] = [
  { header: 'type', cell: (g) => g.type },
  { header: 'model', cell: (g) => g.model },
  { header: 'voice', cell: groupVoice },
  { header: 'parameters', cell: groupParameters },
  { header: 'characters', cell: (g) => (g.characters === null ? '' : formatCount(g.characters)), right: true },
  { header: 'jobs', cell: (g) => formatCount(g.jobs), right: true },
  { header: 'price source', cell: groupSource },
  { header: 'calls', cell: (g) => formatCount(g.calls), right: true },
  { header: 'total', cell: (g) => exactUsd(g.totalMicro), right: true },
];

const MONEY = { headers: ['', 'amount'], align: ['left', 'right'] } satisfies Omit<Table, 'rows'>;

/** `estimate`'s `<name>.estimate.md`. */
export function estimateMarkdown(report: CostReport, title: string): string {
  return [
    `# Cost estimate: ${cell(title)}`,
    `${formatCount(report.jobs)} jobs, ${report.planName} plan. ${report.withinBudget ? 'Within budget.' : '**Over budget.**'}`,
    `## Money\n\n${markdownTable({ ...MONEY, rows: estimateMoneyRows(report) })}`,
    `## By type\n\n${markdownTable(totalsTable('type', report.byType, exactUsd))}`,
    `## By model\n\n${markdownTable(totalsTable('model', report.byModel, exactUsd))}`,
    `## By price group\n\n${markdownTable(tableOf(GROUP_COLUMNS, report.byGroup))}`,
    `## Pace\n\n${paceLines(report).join('\n')}`,
  ].join('\n\n') + '\n';
}

function estimateMoneyRows(report: CostReport): string[][] {
  const rows = moneyRows(report, exactUsd);
  if (!report.withinBudget) {
    rows.push(['Over budget by', exactUsd(report.overByMicro)]);
    rows.push([`Fits with --partial (${formatCount(report.fitCount)} jobs)`, exactUsd(report.fitMicro)]);
  }
  if (report.balanceMicro !== null) {
    rows.push(['Balance', exactUsd(report.balanceMicro)]);
    rows.push(['Balance covers what is to spend', report.balanceCovers === true ? 'yes' : 'no']);
  }
  return rows;
}

function paceLines(report: CostReport): string[] {
  return [
    `- ${priceCallsText(report)}`,
    `- Duration at the ${report.planName} plan's pace: ${cell(report.durationText)}`,
  ];
}

/** `status --format md`: counts, money, and the jobs that need a person. */
export function statusMarkdown(summary: StatusSummary, title: string): string {
  const parts = [
    `# Status: ${cell(title)}`,
    `## Jobs by state\n\n${markdownTable({ headers: ['state', 'jobs'], rows: stateCountRows(summary), align: MONEY.align })}`,
    `## Money\n\n${markdownTable({ ...MONEY, rows: statusMoneyRows(summary) })}`,
  ];
  if (summary.inDoubt.total > 0) parts.push(jobSection('In doubt (may have been paid; sent again only with --resubmit-in-doubt)', summary.inDoubt));
  if (summary.failed.total > 0) parts.push(jobSection('Failed', summary.failed));
  return `${parts.join('\n\n')}\n`;
}

function statusMoneyRows(summary: StatusSummary): string[][] {
  const rows = [['Spent', exactUsd(summary.spentMicro)], ['Budget', summary.budgetMicro === null ? 'none' : exactUsd(summary.budgetMicro)]];
  if (summary.budgetMicro !== null) rows.push(['Left', exactUsd(summary.budgetMicro - summary.spentMicro)]);
  return rows;
}

const JOB_COLUMNS: Column<StatusJob>[] = [
  { header: 'id', cell: (job) => job.id },
  { header: 'type', cell: (job) => job.type },
  { header: 'price', cell: (job) => (job.priceMicro === null ? '' : exactUsd(job.priceMicro)), right: true },
  { header: 'request id', cell: (job) => job.requestId ?? '' },
  { header: 'reason', cell: (job) => job.error ?? '' },
];

/** A group's first jobs (StatusSummary keeps LISTED_JOBS of each) and how many more it has. */
function jobSection(title: string, group: ListedJobs): string {
  const more = group.total - group.jobs.length;
  const rest = more > 0 ? `\n\n…and ${formatCount(more)} more (every job is in the CSV).` : '';
  return `## ${title}: ${formatCount(group.total)}\n\n${markdownTable(tableOf(JOB_COLUMNS, group.jobs))}${rest}`;
}
