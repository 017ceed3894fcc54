import { describeGroupKey } from '../pricing/keys.js';
import type { CostReport, CostReportJob, CostTotals } from '../pricing/report.js';
import type { GroupSummary, PriceSource } from '../pricing/types.js';
import { formatUsd, type MicroUsd } from '../money.js';
import { groupParameters, groupSource, groupVoice, PRICE_SOURCES } from './csv.js';
import { stepsInOrder, type StepFigures } from './steps.js';
import { AMOUNTS, exactUsd, formatCount, markdownCell, markdownTable, paint, renderTable, tableOf } from './text.js';
import type { Column, Table } from './text.js';

/** Jobs the text report lists one per line before the rest is summarised; the CSV has them all. */
export const COST_JOB_LINES = 30;

/** The cost report, and for a manifest whose jobs take others' results its figures by step. */
export type EstimateReport = CostReport & { steps?: StepFigures | undefined };

/** The `estimate` report as aligned text tables, readable without colour, listing `firstJobs` (COST_JOB_LINES). */
export function formatCostReport(
  report: EstimateReport,
  options: { color: boolean; firstJobs: readonly CostReportJob[] },
): string {
  const { color } = options;
  const sections = [
    paint(color, 'bold', `Cost estimate: ${formatCount(report.jobs)} jobs, ${titleCase(report.planName)} plan`),
    `Jobs\n${jobLines(report, options.firstJobs, color)}`,
    ...(report.steps === undefined ? [] : [`By step\n${renderTable(stepTable(report.steps, formatUsd), color)}`]),
    `By type\n${renderTable(totalsTable('type', report.byType, formatUsd), color)}`,
    `By model\n${renderTable(totalsTable('model', report.byModel, formatUsd), color)}`,
    `Price groups\n${renderTable(tableOf(GROUP_COLUMNS, report.byGroup), color)}`,
    `Money\n${moneyLines(report, color).join('\n')}`,
    `Pace\n${paceLines(report).join('\n')}`,
  ];
  return `${sections.join('\n\n')}\n`;
}

function jobLines(report: CostReport, shown: readonly CostReportJob[], color: boolean): string {
  const table = renderTable(tableOf(JOB_COLUMNS, shown), color);
  const rest = report.jobs - shown.length;
  return rest > 0 ? `${table}\n  … and ${formatCount(rest)} more (every job is in the CSV report)` : table;
}

const JOB_COLUMNS: Column<CostReportJob>[] = [
  { header: 'id', cell: (job) => job.id },
  { header: 'type', cell: (job) => job.type },
  { header: 'model', cell: (job) => job.model },
  { header: 'price', cell: (job) => (job.upperBound === true ? '≤ ' : '') + formatUsd(job.priceMicro), right: true },
  { header: 'source', cell: (job) => job.source },
  { header: '', cell: (job) => (job.toSend ? '' : 'already sent') },
];

function stepTable(steps: StepFigures, usd: (micro: MicroUsd) => string): Table {
  const totals = stepsInOrder(steps).map(([step, t]): [string, CostTotals] => [String(step), t]);
  return totalsTable('step', Object.fromEntries(totals), usd);
}

/** A breakdown by type or model, for the text and markdown reports, each amount written by `usd`. */
function totalsTable(label: string, totals: Record<string, CostTotals>, usd: (micro: MicroUsd) => string): Table {
  return {
    headers: [label, 'jobs', 'total'],
    rows: Object.entries(totals).map(([name, t]) => [name, formatCount(t.jobs), usd(t.totalMicro)]),
    align: ['left', 'right', 'right'],
  };
}

const GROUP_COLUMNS: Column<GroupSummary>[] = [
  { header: 'group', cell: (g) => describeGroupKey(g.key) },
  { header: 'jobs', cell: (g) => formatCount(g.jobs), right: true },
  { header: 'lengths', cell: (g) => (g.distinctLengths === null ? '-' : formatCount(g.distinctLengths)), right: true },
  { header: 'method', cell: (g) => g.method },
  { header: 'calls', cell: (g) => formatCount(g.calls), right: true },
  { header: 'total', cell: (g) => formatUsd(g.totalMicro), right: true },
];

/** The money rows the text and markdown reports share, each amount written by `usd`. */
function moneyRows(report: CostReport, usd: (micro: MicroUsd) => string): string[][] {
  const rows = [
    ['Total (whole manifest)', usd(report.totalMicro)],
    ['Already spent (ledger)', usd(report.spentMicro)],
    [`To spend (${formatCount(report.jobsToSend)} jobs)`, usd(report.toSpendMicro)],
    ['Budget', report.budgetMicro === null ? 'none' : usd(report.budgetMicro)],
  ];
  if (report.leftMicro !== null) rows.push(['Left after the run', usd(report.leftMicro)]);
  return rows;
}

function moneyLines(report: EstimateReport, color: boolean): string[] {
  const rows = moneyRows(report, formatUsd);
  if (report.balanceMicro !== null) rows.push(['Balance', formatUsd(report.balanceMicro)]);
  const lines = [renderTable({ rows, align: ['left', 'right'] }, color)];
  const bounds = report.steps?.upperBounds ?? 0;
  if (bounds > 0) lines.push(upperBoundsText(bounds).replace(/^|\n/g, '$&  '));
  if (!report.withinBudget) lines.push(overBudgetLine(report, color));
  if (report.balanceCovers === false) {
    lines.push(
      paint(color, 'yellow', `  Warning: the balance ${formatUsd(report.balanceMicro ?? 0)} does not cover the ${formatUsd(report.toSpendMicro)} to spend; a run would refuse to start.`),
    );
  }
  return lines;
}

/** Why some prices are marked `≤`: said once, in the text and the markdown. */
function upperBoundsText(jobs: number): string {
  const what = `≤ ${formatCount(jobs)} job(s) are priced at the catalogue's upper bound`;
  return `${what}: their price depends on an input not made yet.\n` +
    'The budget reserves the bound; a run prices each for real before sending it and releases the rest.';
}

function overBudgetLine(report: CostReport, color: boolean): string {
  const over = `  Over budget by ${formatUsd(report.overByMicro)}.`;
  const fit =
    ` With --partial, the first ${formatCount(report.fitCount)} of ${formatCount(report.jobsToSend)} jobs` +
    ` to send fit (${formatUsd(report.fitMicro)}); the rest would be skipped.`;
  return paint(color, 'red', over + fit);
}

/** `Price calls: 4 (prices: 5 quoted, 5 derived, 0 cached)`, in the text and markdown reports. */
function priceCallsText(report: CostReport): string {
  const jobs = (source: PriceSource): number =>
    report.byGroup.reduce((sum, group) => sum + group.jobsBySource[source], 0);
  const prices = PRICE_SOURCES.map((source) => `${formatCount(jobs(source))} ${source}`).join(', ');
  return `Price calls: ${formatCount(report.priceCalls)} (prices: ${prices})`;
}

function paceLines(report: CostReport): string[] {
  const lines = [
    `  ${priceCallsText(report)}`,
    `  Duration: ${report.durationText}, at least ${formatCount(report.duration.statusPollsMin)} status polls`,
    ...webhookLines(report),
  ];
  if (report.cachedPriceAgeMs !== null) {
    // The estimate is free because of the cache; the run pays, so it checks first.
    lines.splice(1, 0, `  Cached prices are up to ${formatAge(report.cachedPriceAgeMs)} old; run checks each price group with one fresh call before it sends anything.`);
  }
  if (report.duration.durationMs >= 24 * 3_600_000) {
    lines.push('  Daily caps reset at 00:00 UTC; the run pauses until then, or exits with --no-wait and resumes later.');
  }
  return lines;
}

/** Status calls by polling against the plan's daily cap, and what following by webhooks saves. */
function webhookLines(report: CostReport): string[] {
  const { statusPollsMin, statusPerDay, withWebhooks } = report.duration;
  if (statusPollsMin === 0) return [];
  const cap = statusPerDay === undefined ? '' : ` (${titleCase(report.planName)} allows ${formatCount(statusPerDay)}/day)`;
  return [
    `  Status calls: at least ${formatCount(statusPollsMin)} polling${cap}; with --webhook-url only for jobs not heard from`,
    `  Duration with --webhook-url: ${withWebhooks.text}`,
  ];
}

function formatAge(ageMs: number): string {
  const minutes = Math.floor(ageMs / 60_000);
  if (minutes < 1) return 'a minute';
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

function titleCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

const MARKDOWN_GROUP_COLUMNS: Column<GroupSummary>[] = [
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

/** `estimate`'s `<name>.estimate.md`. */
export function estimateMarkdown(report: EstimateReport, title: string): string {
  const bounds = report.steps?.upperBounds ?? 0;
  return [
    `# Cost estimate: ${markdownCell(title)}`,
    `${formatCount(report.jobs)} jobs, ${report.planName} plan. ${report.withinBudget ? 'Within budget.' : '**Over budget.**'}`,
    `## Money\n\n${markdownTable({ ...AMOUNTS, rows: estimateMoneyRows(report) })}`,
    ...(bounds > 0 ? [upperBoundsText(bounds)] : []),
    ...(report.steps === undefined ? [] : [`## By step\n\n${markdownTable(stepTable(report.steps, exactUsd))}`]),
    `## By type\n\n${markdownTable(totalsTable('type', report.byType, exactUsd))}`,
    `## By model\n\n${markdownTable(totalsTable('model', report.byModel, exactUsd))}`,
    `## By price group\n\n${markdownTable(tableOf(MARKDOWN_GROUP_COLUMNS, report.byGroup))}`,
    `## Pace\n\n${markdownPaceLines(report).join('\n')}`,
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

function markdownPaceLines(report: CostReport): string[] {
  return [
    `- ${priceCallsText(report)}`,
    `- Duration at the ${report.planName} plan's pace: ${markdownCell(report.durationText)}`,
  ];
}
