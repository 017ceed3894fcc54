/*
 * The review page in the browser, from file://, with no network and no library: reads the jobs the
 * renderer wrote as JSON, fills the filters, and draws one page of rows at a time for the view in
 * the address (browser-view.js). Inlined after browser-view.js, as one script, by
 * render.ts (reviewPageScript), which drops the import below: the two are one module in the page.
 */
import { ATTENTION, formatMicroUsd, parseView, PAGE_SIZES, pipelineLinks, selectRows, splitTag, viewHash } from './browser-view.js';

/** @typedef {import('./browser-view.js').RowTuple} RowTuple */
/** @typedef {import('./browser-view.js').PageMeta} PageMeta */
/** @typedef {import('./browser-view.js').View} View */
/** @typedef {NonNullable<ReturnType<typeof pipelineLinks>> & { rows: RowTuple[] }} Links */
/**
 * @typedef {Record<keyof typeof SELECTS, HTMLSelectElement>
 *   & { search: HTMLInputElement, size: HTMLSelectElement }} Controls
 */

/** The toolbar's selects, by the view's text each sets (the search box sets `q`). */
const SELECTS = /** @type {const} */ ({
  state: 'filter-state', kind: 'filter-kind', model: 'filter-model', tag: 'filter-tag', group: 'group-by',
});
const SELECT_KEYS = /** @type {(keyof typeof SELECTS)[]} */ (Object.keys(SELECTS));

/** Dependents listed under a job: an image a thousand jobs take must not make a row a thousand links long. */
const MAX_DEPENDENTS = 20;

/** Tags offered in the tag list, most used first; search finds the others. */
const MAX_TAG_OPTIONS = 300;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {{ className?: string, text?: string, title?: string, attrs?: Record<string, string> }} [options]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className !== undefined) node.className = options.className;
  // Job texts, errors and ids only ever go in as text, never as markup.
  if (options.text !== undefined) node.textContent = options.text;
  if (options.title !== undefined) node.title = options.title;
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function byId(id, type) {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the review page has no #${id}`);
  return node;
}

/**
 * @param {string} id
 * @returns {unknown}
 */
function readJson(id) {
  return JSON.parse(byId(id, HTMLScriptElement).textContent ?? 'null');
}

/**
 * A result on disk, as a player: audio and video load nothing until played, images only when
 * scrolled into view, so a page of rows never fetches a page of media. A text or an embedding
 * shows its glimpse (the text's start, the embedding's size and first values) as text; its
 * file, the whole of it, is the link.
 * @param {string} href
 * @param {'audio' | 'video' | 'image' | 'text' | 'embedding'} media
 * @param {string} id
 * @param {string | null} glimpse
 */
function player(href, media, id, glimpse) {
  const link = el('a', { className: 'file', text: decodeURIComponent(href.split('/').pop() ?? href), attrs: { href, target: '_blank', rel: 'noopener' } });
  /** @type {HTMLElement} */
  let shown;
  if (media === 'text' || media === 'embedding') {
    shown = el('div', { className: 'glimpse', text: glimpse ?? '' });
  } else if (media === 'image') {
    shown = el('a', { attrs: { href, target: '_blank', rel: 'noopener' } }, [el('img', { attrs: { src: href, loading: 'lazy', decoding: 'async', alt: `result of ${id}` } })]);
  } else {
    shown = el(media, { attrs: { src: href, controls: '', preload: 'none' } });
  }
  const box = el('div', { className: `player ${media}` }, [shown, link]);
  // A text's glimpse is read from its file when the page is written: none, the file was gone.
  if ((media === 'text' || media === 'embedding') && glimpse === null) box.classList.add('missing');
  shown.querySelector('img')?.addEventListener('error', () => box.classList.add('missing'));
  shown.addEventListener('error', () => box.classList.add('missing'));
  return box;
}

/**
 * A link to the view of one job (the search for its id), as a bookmark to it would be.
 * @param {string} id
 */
function jobLink(id) {
  return el('a', { className: 'job-link', text: id, attrs: { href: viewHash({ ...parseView(''), q: id }) } });
}

/**
 * What a job takes from others, each input with its job (an image result as a thumbnail, any other
 * result as a link to its file), and the jobs that take its result.
 * @param {RowTuple} row
 * @param {PageMeta} meta
 * @param {Links} links
 */
function pipelineBox(row, meta, links) {
  const inputs = Object.entries(row[15] ?? {}).map(([field, from]) => {
    const upstream = links.rows[links.rowOf.get(from) ?? -1];
    const href = upstream?.[12] ?? null;
    const kind = upstream === undefined ? undefined : meta.kinds[upstream[1]];
    const name = href === null ? '' : decodeURIComponent(href.split('/').pop() ?? href);
    const thumbnail = () => el('img', { attrs: { src: href ?? '', loading: 'lazy', alt: `result of ${from}` } });
    const shown = kind?.media === 'image' ? thumbnail() : name;
    const file = href === null ? [] : [' ', el('a', { attrs: { href, target: '_blank', rel: 'noopener' } }, [shown])];
    return el('li', { attrs: { 'data-field': field } }, [`${field} ← `, jobLink(from), ...file]);
  });
  const taking = links.dependents.get(row[0]) ?? [];
  const dependents = taking.slice(0, MAX_DEPENDENTS).map((id) => el('li', {}, [jobLink(id)]));
  const more = taking.length - dependents.length;
  if (more > 0) dependents.push(el('li', { text: `… and ${COUNT.format(more)} more` }));
  /** @param {string} name @param {HTMLLIElement[]} items */
  const list = (name, items) => (items.length === 0 ? [] : [el('small', { text: name }), el('ul', { className: name }, items)]);
  return el('div', { className: 'links' }, [...list('inputs', inputs), ...list('dependents', dependents)]);
}

/**
 * @param {RowTuple} row
 * @param {PageMeta} meta
 * @param {(tag: string) => void} onTag
 * @param {Links | null} links
 */
function jobRow(row, meta, onTag, links) {
  const [id, kindIx, stateIx, priceMicro, spentMicro, modelIx, sourceIx, , requestId, text, tags, error, media] = row;
  const [dropped, glimpse] = [row[13], row[14]];
  const kind = meta.kinds[kindIx];
  const state = meta.states[stateIx] ?? '';
  const tagChips = tags.map((tag) => {
    const chip = el('button', { className: 'tag', text: tag, title: `show only jobs tagged ${tag}`, attrs: { type: 'button' } });
    chip.addEventListener('click', () => onTag(tag));
    return chip;
  });
  const price = priceMicro === null ? '—' : formatMicroUsd(priceMicro);
  const spentNote = spentMicro > 0 && spentMicro !== priceMicro ? `spent ${formatMicroUsd(spentMicro)}` : '';
  const textCell = el('td', { className: 'text' }, [el('div', { className: 'clamp', text: text ?? '' })]);
  textCell.addEventListener('click', () => textCell.classList.toggle('open'));
  return el('tr', { className: `job ${state}`, attrs: { 'data-id': id } }, [
    el('td', { className: 'id' }, [
      id,
      ...(dropped === 1 ? [el('br'), el('small', { text: 'no longer in the manifest' })] : []),
      ...(links === null ? [] : [pipelineBox(row, meta, links)]),
    ]),
    el('td', {}, [el('span', { className: `state ${state}`, text: state.replace('_', ' ') })]),
    el('td', { className: 'kind' }, [kind?.name ?? '', el('br'), el('small', { text: meta.models[modelIx] ?? '' })]),
    el('td', { className: 'price' }, [price, el('br'), el('small', { text: [meta.sources[sourceIx] ?? '', spentNote].filter(Boolean).join(' · ') })]),
    textCell,
    el('td', { className: 'tags' }, tagChips),
    el('td', { className: 'result' }, media !== null && kind ? [player(media, kind.media, id, glimpse)] : []),
    el('td', { className: 'error', text: error ?? '' }),
    el('td', { className: 'request', text: requestId ?? '' }),
  ]);
}

/**
 * Options of a select: `['', label]` first, then values with their counts.
 * @param {HTMLSelectElement} select
 * @param {string} allLabel
 * @param {[value: string, label: string][]} options
 */
function fillSelect(select, allLabel, options) {
  select.replaceChildren(el('option', { text: allLabel, attrs: { value: '' } }), ...options.map(([value, label]) => el('option', { text: label, attrs: { value } })));
}

/**
 * @template T
 * @param {T[]} values
 * @returns {Map<T, number>}
 */
function countOf(values) {
  /** @type {Map<T, number>} */
  const counts = new Map();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

const COUNT = new Intl.NumberFormat('en-US');

/**
 * Reads the rows and the meta the renderer wrote, fills the filters, and renders the first page.
 * Everything after that is a re-render of one page on a change of the view.
 */
export function startReviewPage() {
  const rows = /** @type {RowTuple[]} */ (readJson('review-rows'));
  const meta = /** @type {PageMeta} */ (readJson('review-meta'));
  const found = pipelineLinks(rows);
  const links = found === null ? null : { ...found, rows };
  const ui = {
    .../** @type {Record<keyof typeof SELECTS, HTMLSelectElement>} */ (
      Object.fromEntries(Object.entries(SELECTS).map(([key, id]) => [key, byId(id, HTMLSelectElement)]))
    ),
    search: byId('search', HTMLInputElement),
    size: byId('page-size', HTMLSelectElement),
    body: byId('job-rows', HTMLTableSectionElement),
    shown: byId('shown', HTMLElement),
    pages: /** @type {HTMLElement[]} */ ([...document.querySelectorAll('.pager')]),
  };
  /** @type {(string | undefined)[]} */
  const searchable = [];
  /** @param {number} index */
  const haystack = (index) => {
    let text = searchable[index];
    if (text === undefined) {
      const row = /** @type {RowTuple} */ (rows[index]);
      text = [row[0], row[9], row[11], row[8], meta.models[row[5]], ...row[10]].join('\n').toLowerCase();
      searchable[index] = text;
    }
    return text;
  };
  fillFilters(rows, meta, ui);
  // The page is written in UTC; the reader's clock says it in their own time.
  for (const time of document.querySelectorAll('time[datetime]')) time.textContent = new Date(time.getAttribute('datetime') ?? '').toLocaleString();
  let view = parseView(location.hash);
  /** @type {ReturnType<typeof selectRows> | null} */
  let selected = null;

  /** @param {Partial<View>} change */
  const update = (change) => {
    const filtersChanged = Object.keys(change).some((key) => key !== 'page' && key !== 'size');
    view = { ...view, ...change, page: change.page ?? (filtersChanged || change.size !== undefined ? 0 : view.page) };
    if (filtersChanged) selected = null;
    history.replaceState(null, '', viewHash(view) || location.pathname + location.search);
    render();
  };
  const render = () => {
    selected ??= selectRows(rows, meta, view, haystack);
    syncControls(ui, view);
    renderPage(rows, meta, view, selected, ui, update, links);
  };

  let typing = 0;
  ui.search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = window.setTimeout(() => update({ q: ui.search.value }), 150);
  });
  for (const key of SELECT_KEYS) ui[key].addEventListener('change', () => update({ [key]: ui[key].value }));
  ui.size.addEventListener('change', () => update({ size: Number(ui.size.value) }));
  for (const button of document.querySelectorAll('[data-filter-state]')) {
    button.addEventListener('click', () => {
      update({ state: button.getAttribute('data-filter-state') ?? '' });
      byId('jobs', HTMLElement).scrollIntoView();
    });
  }
  // Back, forward, or a link to another view of this page: the address says what to show.
  window.addEventListener('hashchange', () => {
    view = parseView(location.hash);
    selected = null;
    ui.search.value = view.q;
    render();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === '/' && document.activeElement !== ui.search) {
      event.preventDefault();
      ui.search.focus();
    }
  });
  render();
  document.documentElement.dataset['ready'] = 'true';
  performance.mark('review-interactive');
}

/**
 * @param {RowTuple[]} rows
 * @param {PageMeta} meta
 * @param {Controls} ui
 */
function fillFilters(rows, meta, ui) {
  const byState = countOf(rows.map((row) => row[2]));
  const byKind = countOf(rows.map((row) => row[1]));
  const byModel = countOf(rows.map((row) => row[5]));
  const byTag = countOf(rows.flatMap((row) => row[10]));
  const attention = ATTENTION.split(',').reduce((sum, state) => sum + (byState.get(meta.states.indexOf(state)) ?? 0), 0);
  /** @type {[string, string][]} */
  const stateOptions = meta.states.flatMap((state, i) => (byState.has(i) ? [[state, `${state.replace('_', ' ')} (${COUNT.format(byState.get(i) ?? 0)})`]] : []));
  fillSelect(ui.state, `every state (${COUNT.format(rows.length)})`, [[ATTENTION, `failed or in doubt (${COUNT.format(attention)})`], ...stateOptions]);
  fillSelect(ui.kind, 'every kind', meta.kinds.flatMap((kind, i) => (byKind.has(i) ? [[kind.name, `${kind.name} (${COUNT.format(byKind.get(i) ?? 0)})`]] : [])));
  fillSelect(ui.model, 'every model', meta.models.flatMap((model, i) => (byModel.has(i) ? [[model, `${model} (${COUNT.format(byModel.get(i) ?? 0)})`]] : [])));
  const tags = [...byTag].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, MAX_TAG_OPTIONS);
  fillSelect(ui.tag, byTag.size === 0 ? 'no tags' : 'every tag', tags.map(([tag, n]) => [tag, `${tag} (${COUNT.format(n)})`]));
  ui.tag.disabled = byTag.size === 0;
  const tagKeys = [...new Set([...byTag.keys()].map(splitTag).flatMap((split) => (split === null ? [] : [split[0]])))].sort();
  const hasPlainTags = [...byTag.keys()].some((tag) => splitTag(tag) === null);
  fillSelect(ui.group, 'no grouping', [
    ...tagKeys.map((key) => /** @type {[string, string]} */ ([`tag:${key}`, `tag ${key}`])),
    ...(hasPlainTags ? [/** @type {[string, string]} */ (['tags', 'plain tags'])] : []),
    ['kind', 'kind'],
    ['model', 'model'],
    ['price-group', 'price group'],
    ['state', 'state'],
  ]);
  ui.size.replaceChildren(...PAGE_SIZES.map((n) => el('option', { text: `${n} a page`, attrs: { value: String(n) } })));
}

/**
 * @param {Controls} ui
 * @param {View} view
 */
function syncControls(ui, view) {
  if (document.activeElement !== ui.search) ui.search.value = view.q;
  for (const key of SELECT_KEYS) ui[key].value = view[key];
  ui.size.value = String(view.size);
  for (const button of document.querySelectorAll('[data-filter-state]')) {
    button.classList.toggle('active', button.getAttribute('data-filter-state') === view.state);
  }
}

/**
 * The one page of rows the view is on, with a header row wherever a group starts.
 * @param {RowTuple[]} rows
 * @param {PageMeta} meta
 * @param {View} view
 * @param {ReturnType<typeof selectRows>} selected
 * @param {{ body: HTMLTableSectionElement, shown: HTMLElement, pages: HTMLElement[] }} ui
 * @param {(change: Partial<View>) => void} update
 * @param {Links | null} links
 */
function renderPage(rows, meta, view, selected, ui, update, links) {
  const { order, keys, sizes } = selected;
  const pageCount = Math.max(1, Math.ceil(order.length / view.size));
  const page = Math.min(view.page, pageCount - 1);
  const from = page * view.size;
  const to = Math.min(order.length, from + view.size);
  /** @type {HTMLTableRowElement[]} */
  const trs = [];
  for (let at = from; at < to; at += 1) {
    const key = keys?.[at];
    if (keys !== null && key !== undefined && (at === from || keys[at - 1] !== key)) {
      const continued = at === from && at > 0 && keys[at - 1] === key ? ' (continued)' : '';
      const size = sizes.get(key) ?? 0;
      trs.push(el('tr', { className: 'group' }, [el('th', { text: `${key}${continued} · ${COUNT.format(size)} job${size === 1 ? '' : 's'}`, attrs: { colspan: '9' } })]));
    }
    const row = /** @type {RowTuple} */ (rows[/** @type {number} */ (order[at])]);
    trs.push(jobRow(row, meta, (tag) => update({ tag }), links));
  }
  if (trs.length === 0) trs.push(el('tr', { className: 'empty' }, [el('td', { text: 'No job matches these filters.', attrs: { colspan: '9' } })]));
  ui.body.replaceChildren(...trs);
  const of = order.length === rows.length ? `${COUNT.format(rows.length)} jobs` : `${COUNT.format(order.length)} matching (of ${COUNT.format(rows.length)} jobs)`;
  ui.shown.textContent = order.length === 0 ? `0 matching (of ${COUNT.format(rows.length)} jobs)` : `${COUNT.format(from + 1)}–${COUNT.format(to)} of ${of}`;
  for (const pager of ui.pages) renderPager(pager, page, pageCount, update);
}

/**
 * @param {HTMLElement} pager
 * @param {number} page
 * @param {number} pageCount
 * @param {(change: Partial<View>) => void} update
 */
function renderPager(pager, page, pageCount, update) {
  /** @param {string} label @param {number} to @param {string} title */
  const go = (label, to, title) => {
    const button = el('button', { text: label, title, attrs: { type: 'button' } });
    button.disabled = to < 0 || to >= pageCount || to === page;
    button.addEventListener('click', () => update({ page: to }));
    return button;
  };
  pager.replaceChildren(
    go('«', 0, 'first page'),
    go('‹', page - 1, 'previous page'),
    el('span', { text: `page ${COUNT.format(page + 1)} of ${COUNT.format(pageCount)}` }),
    go('›', page + 1, 'next page'),
    go('»', pageCount - 1, 'last page'),
  );
}

if (typeof document !== 'undefined') startReviewPage();
