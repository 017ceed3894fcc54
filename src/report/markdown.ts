import { escapeControlChars } from '../control-chars.js';
import { decimalUsd, type MicroUsd } from '../money.js';
import type { CostReport, CostTotals } from '../pricing/report.js';
import { moneyRows, priceCallsText } from './cost-report.js';
import { groupParameters, groupSource, groupVoice } from './csv.js';
import { stateCountRows, type ListedJobs, type StatusSummary } from './status.js';
import { formatCount } from './text.js';

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

/** A table whose columns listed in `right` (numbers, money) are right-aligned. */
function table(headers: readonly string[], rows: readonly (readonly string[])[], right: readonly number[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const align = headers.map((_, i) => (right.includes(i) ? '---:' : '---'));
  return [line(headers.map(cell)), line(align), ...rows.map((row) => line(row.map(cell)))].join('\n');
}

function totalsTable(label: string, totals: Record<string, CostTotals>): string {
  return table([label, 'jobs', 'total'], Object.entries(totals).map(([name, t]) => [name, formatCount(t.jobs), exactUsd(t.totalMicro)]), [1, 2]);
}

/** `estimate`'s `<name>.estimate.md`. */
export function estimateMarkdown(report: CostReport, title: string): string {
  const groups = table(
    ['type', 'model', 'voice', 'parameters', 'characters', 'jobs', 'price source', 'calls', 'total'],
    report.byGroup.map((g) => [
      g.type,
      g.model,
      groupVoice(g),
      groupParameters(g),
      g.characters === null ? '' : formatCount(g.characters),
      formatCount(g.jobs),
      groupSource(g),
      formatCount(g.calls),
      exactUsd(g.totalMicro),
    ]),
    [4, 5, 7, 8],
  );
  return [
    `# Cost estimate: ${cell(title)}`,
    `${formatCount(report.jobs)} jobs, ${report.planName} plan. ${report.withinBudget ? 'Within budget.' : '**Over budget.**'}`,
    `## Money\n\n${table(['', 'amount'], estimateMoneyRows(report), [1])}`,
    `## By type\n\n${totalsTable('type', report.byType)}`,
    `## By model\n\n${totalsTable('model', report.byModel)}`,
    `## By price group\n\n${groups}`,
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
    `## Jobs by state\n\n${table(['state', 'jobs'], stateCountRows(summary), [1])}`,
    `## Money\n\n${table(['', 'amount'], statusMoneyRows(summary), [1])}`,
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

/** A group's first jobs (StatusSummary keeps LISTED_JOBS of each) and how many more it has. */
function jobSection(title: string, group: ListedJobs): string {
  const rows = group.jobs.map((job) => [job.id, job.type, job.priceMicro === null ? '' : exactUsd(job.priceMicro), job.requestId ?? '', job.error ?? '']);
  const more = group.total - group.jobs.length;
  const rest = more > 0 ? `\n\n…and ${formatCount(more)} more (every job is in the CSV).` : '';
  return `## ${title}: ${formatCount(group.total)}\n\n${table(['id', 'type', 'price', 'request id', 'reason'], rows, [2])}${rest}`;
}
