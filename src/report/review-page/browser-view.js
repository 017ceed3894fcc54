/*
 * The review page's view of its jobs, with no DOM: the row tuple and the meta document the
 * renderer writes (their types are imported by render.ts, so both sides agree), money, tags, the
 * view kept in the address's hash, and filtering and grouping. browser-page.js draws with it.
 *
 * The page inlines this file and browser-page.js as one script (render.ts, reviewPageScript). Both are plain
 * JavaScript typed with JSDoc: tsc checks them against the DOM (tsconfig.browser.json, run by
 * test/report/review-page-script.test.ts) while the node build only copies them to dist/. Node
 * tests import this one as it is.
 */

/**
 * One job as the page holds it: a tuple, not an object, because 100,000 of them are parsed at
 * once. Indexes point into the lists of {@link PageMeta}; -1 is none.
 * @typedef {[
 *   id: string,
 *   kind: number,
 *   state: number,
 *   priceMicro: number | null,
 *   spentMicro: number,
 *   model: number,
 *   source: number,
 *   group: number,
 *   requestId: string | null,
 *   text: string | null,
 *   tags: string[],
 *   error: string | null,
 *   media: string | null,
 *   dropped: 0 | 1,
 *   glimpse: string | null,
 *   inputs?: Record<string, string>,
 * ]} RowTuple
 */

/**
 * What the rows' indexes mean, written after the rows (the lists grow while they stream).
 * @typedef {{
 *   format: 1,
 *   states: string[],
 *   kinds: { name: string, media: 'audio' | 'video' | 'image' | 'text' | 'embedding' }[],
 *   models: string[],
 *   sources: string[],
 *   groups: string[],
 * }} PageMeta
 */

/** @typedef {{ q: string, state: string, kind: string, model: string, tag: string, group: string, page: number, size: number }} View */

/** The state filter that shows every job a person must look at: the summary's first button. */
export const ATTENTION = 'failed,in_doubt';

/** Rows on one page of the table: the DOM holds at most this many, whatever the batch's size. */
export const PAGE_SIZES = [50, 100, 250, 500];
const DEFAULT_PAGE_SIZE = 100;

/**
 * Exact dollars from whole micro-dollars, as the CSV writes them: `$0.000077`, `$12.5`.
 * @param {number} micro
 */
export function formatMicroUsd(micro) {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  const fraction = String(abs % 1_000_000).padStart(6, '0').replace(/0+$/, '');
  const whole = Math.floor(abs / 1_000_000);
  return `${sign}$${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/**
 * `key:value` or `key=value` tags group by their key; any other tag is a plain one.
 * @param {string} tag
 * @returns {[string, string] | null}
 */
export function splitTag(tag) {
  const at = tag.search(/[:=]/);
  return at > 0 && at < tag.length - 1 ? [tag.slice(0, at), tag.slice(at + 1)] : null;
}

/** The view's text fields, each kept in the hash under its own name. */
const VIEW_TEXTS = /** @type {const} */ (['q', 'state', 'kind', 'model', 'tag', 'group']);

/**
 * The view a location hash describes (`#state=failed&q=intro`), with defaults for what it omits.
 * @param {string} hash
 * @returns {View}
 */
export function parseView(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const size = Number(params.get('size'));
  const entries = VIEW_TEXTS.map((key) => [key, params.get(key) ?? '']);
  const texts = /** @type {Omit<View, 'page' | 'size'>} */ (Object.fromEntries(entries));
  return {
    ...texts,
    page: Math.max(0, Number(params.get('page')) || 0),
    size: PAGE_SIZES.includes(size) ? size : DEFAULT_PAGE_SIZE,
  };
}

/**
 * The hash that brings a view back: only what differs from the defaults.
 * @param {View} view
 */
export function viewHash(view) {
  const params = new URLSearchParams();
  for (const key of VIEW_TEXTS) if (view[key] !== '') params.set(key, view[key]);
  if (view.page > 0) params.set('page', String(view.page));
  if (view.size !== DEFAULT_PAGE_SIZE) params.set('size', String(view.size));
  const text = params.toString();
  return text === '' ? '' : `#${text}`;
}

/**
 * A function telling whether a row passes the view's filters and search.
 * @param {PageMeta} meta
 * @param {View} view
 * @param {(index: number) => string} haystack lower-case searchable text of row `index`
 * @returns {(row: RowTuple, index: number) => boolean}
 */
export function rowFilter(meta, view, haystack) {
  const states = new Set(view.state === '' ? [] : view.state.split(',').map((s) => meta.states.indexOf(s)));
  const kind = view.kind === '' ? -2 : meta.kinds.findIndex((k) => k.name === view.kind);
  const model = view.model === '' ? -2 : meta.models.indexOf(view.model);
  const words = view.q.toLowerCase().split(/\s+/).filter((w) => w !== '');
  return (row, index) =>
    (states.size === 0 || states.has(row[2])) &&
    (kind === -2 || row[1] === kind) &&
    (model === -2 || row[5] === model) &&
    (view.tag === '' || row[10].includes(view.tag)) &&
    (words.length === 0 || words.every((w) => haystack(index).includes(w)));
}

/**
 * Where each job's row is, and each job's dependents (the jobs that take its result), from the
 * inputs the rows carry (field → id, only on a job that takes others' results); null when none does.
 * @param {RowTuple[]} rows
 * @returns {{ rowOf: Map<string, number>, dependents: Map<string, string[]> } | null}
 */
export function pipelineLinks(rows) {
  if (!rows.some((row) => row[15] !== undefined)) return null;
  /** @type {Map<string, string[]>} */
  const dependents = new Map();
  for (const [id, , , , , , , , , , , , , , , inputs] of rows) {
    for (const from of Object.values(inputs ?? {})) {
      const taking = dependents.get(from);
      if (taking === undefined) dependents.set(from, [id]);
      else if (taking.at(-1) !== id) taking.push(id);
    }
  }
  return { rowOf: new Map(rows.map((row, i) => [row[0], i])), dependents };
}

/**
 * What a row is grouped under for `group`: kind, model, state, price group, `tag:<key>` (the
 * value of its `key:value` tag) or `tags` (its plain tags together).
 * @param {PageMeta} meta
 * @param {string} group
 * @returns {((row: RowTuple) => string) | null}
 */
export function groupKey(meta, group) {
  if (group === 'kind') return (row) => meta.kinds[row[1]]?.name ?? '';
  if (group === 'model') return (row) => meta.models[row[5]] ?? '(no model)';
  if (group === 'state') return (row) => meta.states[row[2]] ?? '';
  if (group === 'price-group') return (row) => meta.groups[row[7]] ?? '(not priced)';
  if (group === 'tags') return (row) => row[10].filter((t) => splitTag(t) === null).join(', ') || '(no plain tag)';
  if (group.startsWith('tag:')) {
    const key = group.slice(4);
    return (row) => {
      for (const tag of row[10]) {
        const split = splitTag(tag);
        if (split !== null && split[0] === key) return split[1];
      }
      return `(no ${key} tag)`;
    };
  }
  return null;
}

/**
 * The rows a view shows, in order: manifest order, or by group (groups in the order they first
 * appear, the manifest's order inside each), with each group's size.
 * @param {RowTuple[]} rows
 * @param {PageMeta} meta
 * @param {View} view
 * @param {(index: number) => string} haystack
 */
export function selectRows(rows, meta, view, haystack) {
  const keep = rowFilter(meta, view, haystack);
  /** @type {number[]} */
  const picked = [];
  for (let i = 0; i < rows.length; i += 1) if (keep(/** @type {RowTuple} */ (rows[i]), i)) picked.push(i);
  const keyOf = groupKey(meta, view.group);
  if (keyOf === null) return { order: picked, keys: null, sizes: new Map() };
  /** @type {Map<string, number[]>} */
  const byKey = new Map();
  for (const i of picked) {
    const key = keyOf(/** @type {RowTuple} */ (rows[i]));
    const members = byKey.get(key);
    if (members === undefined) byKey.set(key, [i]);
    else members.push(i);
  }
  /** @type {number[]} */
  const order = [];
  /** @type {string[]} */
  const keys = [];
  for (const [key, members] of byKey) {
    for (const i of members) {
      order.push(i);
      keys.push(key);
    }
  }
  return { order, keys, sizes: new Map([...byKey].map(([key, members]) => [key, members.length])) };
}
