import { decimalUsd, formatUsd, type MicroUsd } from '../../money.js';
import { formatCount } from '../text.js';
import { ATTENTION } from './browser-view.js';
import type { Tally } from './render.js';

/**
 * What the page says about itself and the run: its title (the manifest's file name), when it was
 * written (ISO 8601), the ledger it was read from, and the folder it is written to (results are
 * linked relative to it).
 */
export interface ReviewPageFacts {
  title: string;
  generatedAt: string;
  ledger: string;
  spentMicro: MicroUsd;
  budgetMicro: MicroUsd | null;
  pageDir: string;
}

/** Everything before the rows: the head, the header, and the jobs' toolbar and empty table. */
export function pageStart(facts: ReviewPageFacts, csp: string, css: string): string {
  const title = escapeHtml(facts.title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="generator" content="mediabatch">
<title>${title} · mediabatch review</title>
<style>${css}</style>
</head>
<body>
<header>
<h1>${title}</h1>
<p>Written <time datetime="${escapeHtml(facts.generatedAt)}">${escapeHtml(facts.generatedAt)}</time> from the ledger ${escapeHtml(facts.ledger)}. Results play from the files beside this page.</p>
</header>
<main>
<noscript><p>This page needs JavaScript to list the jobs; the totals are below.</p></noscript>
<section id="jobs" aria-label="Jobs">
<div class="toolbar">
<input id="search" type="search" placeholder="Search ids, texts, prompts, errors, tags, request ids  ( / )" aria-label="Search">
<select id="filter-state" aria-label="State"></select>
<select id="filter-kind" aria-label="Kind"></select>
<select id="filter-model" aria-label="Model"></select>
<select id="filter-tag" aria-label="Tag"></select>
<select id="group-by" aria-label="Group by"></select>
<select id="page-size" aria-label="Rows a page"></select>
</div>
<div class="pager-row"><span id="shown">Reading the jobs…</span><div class="pager"></div></div>
<div class="table-scroll"><table class="jobs">
<thead><tr><th>id</th><th>state</th><th>kind · model</th><th>price</th><th>text or prompt</th><th>tags</th><th>result</th><th>error</th><th>request id</th></tr></thead>
<tbody id="job-rows"></tbody>
</table></div>
<div class="pager"></div>
</section>
`;
}

/** Counts by state, failed and in doubt first: each is a button that filters the table to it. */
export function stateButtons(counts: ReadonlyMap<string, number>, total: number): string {
  const failed = counts.get('failed') ?? 0;
  const inDoubt = counts.get('in_doubt') ?? 0;
  const button = (filter: string, label: string, count: number, attention = false): string =>
    `<button type="button" data-filter-state="${escapeHtml(filter)}" data-count="${count}"${attention ? ' class="attention"' : ''}>${escapeHtml(label)}<b>${formatCount(count)}</b></button>`;
  const others = [...counts].filter(([state, n]) => n > 0 && state !== 'failed' && state !== 'in_doubt');
  return [
    '<div class="states"><h2>Jobs</h2>',
    button('', 'every job', total),
    button(ATTENTION, 'failed or in doubt', failed + inDoubt, failed + inDoubt > 0),
    button('failed', 'failed', failed, failed > 0),
    button('in_doubt', 'in doubt', inDoubt, inDoubt > 0),
    ...others.map(([state, n]) => button(state, state.replace('_', ' '), n)),
    '</div>',
  ].join('\n');
}

/** Spent against the budget, exact values in `data-micro` and in each figure's title. */
export function moneyPanel(facts: ReviewPageFacts, pricedMicro: MicroUsd, pricedJobs: number): string {
  const money = (name: string, micro: MicroUsd): string =>
    `<strong data-total="${name}" data-micro="${micro}" title="$${decimalUsd(micro)}">${formatUsd(micro)}</strong>`;
  const { spentMicro, budgetMicro } = facts;
  const priced = `<p class="note">Priced: ${money('priced', pricedMicro)} for ${formatCount(pricedJobs)} job(s), what they cost whether sent or not.</p>`;
  if (budgetMicro === null) {
    return `<div class="money"><h2>Money</h2><p class="spent">Spent ${money('spent', spentMicro)} (no budget set)</p>${priced}</div>`;
  }
  const leftMicro = budgetMicro - spentMicro;
  const over = leftMicro < 0;
  return [
    '<div class="money"><h2>Money</h2>',
    `<p class="spent${over ? ' over' : ''}">Spent ${money('spent', spentMicro)} of the ${money('budget', budgetMicro)} budget · ${over ? 'over by' : 'left'} ${formatUsd(Math.abs(leftMicro))}</p>`,
    `<meter min="0" max="${Math.max(budgetMicro, 1)}" value="${Math.min(spentMicro, Math.max(budgetMicro, 1))}" high="${Math.floor(budgetMicro * 0.9)}" aria-label="spent of the budget"></meter>`,
    priced,
    '</div>',
  ].join('\n');
}

/** One breakdown (by kind, model or price group) as a table; `data-name` and `data-*` carry exact values. */
export function tallyTable(title: string, what: string, names: readonly string[], tallies: readonly Tally[], label = (name: string) => name): string {
  const rows = names.map((name, i) => {
    const t = tallies[i]!;
    return (
      `<tr data-name="${escapeHtml(name)}" data-jobs="${t.jobs}" data-priced-micro="${t.pricedMicro}" data-spent-micro="${t.spentMicro}">` +
      `<td>${escapeHtml(label(name))}</td><td>${formatCount(t.jobs)}</td><td>${formatCount(t.done)}</td><td>${formatCount(t.attention)}</td>` +
      `<td title="$${decimalUsd(t.pricedMicro)}">${formatUsd(t.pricedMicro)}</td><td title="$${decimalUsd(t.spentMicro)}">${formatUsd(t.spentMicro)}</td></tr>`
    );
  });
  return [
    `<details open data-breakdown="${escapeHtml(what)}"><summary>${escapeHtml(title)}</summary>`,
    `<table class="totals"><thead><tr><th>${escapeHtml(what)}</th><th>jobs</th><th>done</th><th>failed, in doubt</th><th>priced</th><th>spent</th></tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody></table></details>`,
  ].join('\n');
}

/** What a page's text and attributes escape: every character that could start or end markup. */
const HTML_SPECIAL = /[&<>"']/g;
const HTML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an HTML element or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(HTML_SPECIAL, (c) => HTML_ENTITY[c] ?? c);
}

/**
 * `<`, `>` and `&` can only occur inside JSON strings, where `\u003c` means the same: escaped,
 * no job text can close the script element (`</script>`) or open a comment (`<!--`) in it.
 * U+2028 and U+2029 end a line in old JavaScript parsers; escaped, they are plain characters.
 */
const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/g;

/** JSON for a `<script type="application/json">` element: `JSON.parse` of its text gives `value` back. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(SCRIPT_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
