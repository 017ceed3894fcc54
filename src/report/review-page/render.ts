import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { JOB_TYPES, kindOf, type JobType } from '../../jobs/index.js';
import { JOB_STATES, type JobState } from '../../jobs/states.js';
import type { MicroUsd } from '../../money.js';
import { describeGroupKey, groupOfPriceKey } from '../../pricing/keys.js';
import { batches, type Rows } from '../documents.js';
import type { PageMeta, RowTuple } from './browser-view.js';
import { jsonForScript, moneyPanel, pageStart, stateButtons, tallyTable, type ReviewPageFacts } from './layout.js';
import { REVIEW_PAGE_CSS } from './styles.js';

/**
 * One job as the review page shows it: `spentMicro` is what the ledger counts as spent on it,
 * `priceKey` names its price group, `text` or `prompt` is what it said (when the ledger has it),
 * `output` the absolute path of its result, `inManifest` false for a paid job the manifest no
 * longer lists.
 */
export interface ReviewJob {
  id: string;
  type: JobType;
  state: JobState;
  priceMicro: MicroUsd | null;
  spentMicro: MicroUsd;
  priceSource: string | null;
  priceKey: string | null;
  model: string | null;
  requestId: string | null;
  text?: string | null | undefined;
  prompt?: string | null | undefined;
  tags?: readonly string[] | null | undefined;
  error: string | null;
  output: string | null;
  inManifest?: boolean | undefined;
  /** A text result's start, an embedding's size and first values. */
  glimpse?: string | null | undefined;
  /** The jobs whose results it takes, by field; null or none for a job that takes none. */
  inputs?: Readonly<Record<string, string>> | null | undefined;
}

/** Distinct models or price groups listed one by one; the rest are summed together. */
const MAX_NAMES = 2000;
/** Rows joined into one chunk of output: fewer, larger writes. */
const ROWS_PER_CHUNK = 500;

/**
 * The review page of `jobs`, as chunks of one self-contained HTML file: styles, script and data
 * inline, nothing fetched (a Content-Security-Policy forbids it), results linked relative to
 * `facts.pageDir`. The jobs are read once, as they come: a million of them pass through while
 * this holds one chunk of rows and the totals.
 */
export async function* renderReviewPage(jobs: Rows<ReviewJob>, facts: ReviewPageFacts): AsyncGenerator<string> {
  const script = reviewPageScript();
  if (/<\/script/i.test(script)) throw new Error('bug in mediabatch: the review page script contains "</script"');
  yield pageStart(facts, contentSecurityPolicy(script, REVIEW_PAGE_CSS), REVIEW_PAGE_CSS);
  yield '<script type="application/json" id="review-rows">[';
  const totals = newTotals();
  let first = true;
  for await (const chunk of batches(jobs, ROWS_PER_CHUNK)) {
    yield (first ? '' : ',') + chunk.map((job) => jsonForScript(toTuple(job, totals, facts.pageDir))).join(',');
    first = false;
  }
  yield ']</script>\n';
  const meta: PageMeta = {
    format: 1,
    states: [...JOB_STATES],
    kinds: JOB_TYPES.map((name) => ({ name, media: kindOf(name).output.media })),
    models: totals.models.names,
    sources: totals.sources,
    groups: totals.groups.names.map(groupLabel),
  };
  yield `<script type="application/json" id="review-meta">${jsonForScript(meta)}</script>\n`;
  yield summary(facts, totals);
  yield `</main>\n<script type="module">${script}</script>\n</body>\n</html>\n`;
}

function newTotals() {
  return {
    all: emptyTally(),
    byState: new Map<string, number>(JOB_STATES.map((state) => [state, 0])),
    kinds: new NamedTallies(JOB_TYPES.length, 'other kinds'),
    models: new NamedTallies(MAX_NAMES, 'other models'),
    groups: new NamedTallies(MAX_NAMES, 'other price groups'),
    sources: [] as string[],
  };
}

type Totals = ReturnType<typeof newTotals>;

function toTuple(job: ReviewJob, totals: Totals, pageDir: string): RowTuple {
  const row = rowOf(job, totals, pageDir);
  // Only a job that takes others' results carries them: every other row stays as short as it was.
  if (job.inputs != null && Object.keys(job.inputs).length > 0) row.push({ ...job.inputs });
  return row;
}

function rowOf(job: ReviewJob, totals: Totals, pageDir: string): RowTuple {
  addToTally(totals.all, job);
  totals.byState.set(job.state, (totals.byState.get(job.state) ?? 0) + 1);
  totals.kinds.add(job.type, job);
  const model = job.model === null ? -1 : totals.models.add(job.model, job);
  const group = job.priceKey === null ? -1 : totals.groups.add(groupOfPriceKey(job.priceKey), job);
  let source = job.priceSource === null ? -1 : totals.sources.indexOf(job.priceSource);
  if (job.priceSource !== null && source === -1) source = totals.sources.push(job.priceSource) - 1;
  return [
    job.id,
    JOB_TYPES.indexOf(job.type),
    JOB_STATES.indexOf(job.state),
    job.priceMicro,
    job.spentMicro,
    model,
    source,
    group,
    job.requestId,
    job.text ?? job.prompt ?? null,
    [...(job.tags ?? [])],
    job.error,
    job.output === null ? null : resultHref(job.output, pageDir),
    job.inManifest === false ? 1 : 0,
    job.glimpse ?? null,
  ];
}

/**
 * A result's address relative to the page, each path segment URL-encoded (`#`, `?`, `%` and `:`
 * in a name stay part of the name, and no path can become a `javascript:` URL). A result on
 * another drive than the page gets a `file:` URL.
 */
export function resultHref(output: string, pageDir: string): string {
  const relative = path.relative(pageDir, output);
  if (path.isAbsolute(relative)) return pathToFileURL(output).href;
  return relative.split(path.sep).map(encodeURIComponent).join('/');
}

function summary(facts: ReviewPageFacts, totals: Totals): string {
  return [
    '<section id="summary" aria-label="Totals">',
    moneyPanel(facts, totals.all.pricedMicro, totals.all.jobs),
    stateButtons(totals.byState, totals.all.jobs),
    '<div class="breakdowns">',
    tallyTable('By kind', 'kind', totals.kinds.names, totals.kinds.tallies),
    tallyTable('By model', 'model', totals.models.names, totals.models.tallies),
    tallyTable('By price group', 'price group', totals.groups.names, totals.groups.tallies, groupLabel),
    '</div>',
    '</section>\n',
  ].join('\n');
}

function groupLabel(groupKey: string): string {
  return groupKey.includes('|') ? describeGroupKey(groupKey) : groupKey;
}

/**
 * Nothing may load from anywhere but the page's own folder: the one inline script and style
 * run by their hashes (an injected `<script>` would not), and media come from files or `self`.
 */
function contentSecurityPolicy(script: string, css: string): string {
  const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
  return [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(css)}`,
    "img-src 'self' file: data:",
    "media-src 'self' file:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * What the totals say about a set of jobs. `attention`: failed or in doubt, the jobs a person must
 * look at; `pricedMicro`: every priced job's price summed, what these jobs cost, paid or not.
 */
export interface Tally {
  jobs: number;
  done: number;
  attention: number;
  pricedMicro: MicroUsd;
  spentMicro: MicroUsd;
}

function emptyTally(): Tally {
  return { jobs: 0, done: 0, attention: 0, pricedMicro: 0, spentMicro: 0 };
}

function addToTally(tally: Tally, job: { state: string; priceMicro: MicroUsd | null; spentMicro: MicroUsd }): void {
  tally.jobs += 1;
  if (job.state === 'done') tally.done += 1;
  if (job.state === 'failed' || job.state === 'in_doubt') tally.attention += 1;
  tally.pricedMicro += job.priceMicro ?? 0;
  tally.spentMicro += job.spentMicro;
}

/**
 * Names numbered in the order they first come (the rows refer to them by number), each with its
 * tally. Past `maxNames` distinct names, the rest share one entry, `overflowName`: a million
 * distinct price groups must not become a million entries held while the page streams.
 */
class NamedTallies {
  readonly names: string[] = [];
  readonly tallies: Tally[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly maxNames: number,
    private readonly overflowName: string,
  ) {}

  /** The number of `name` (or of the overflow entry), counting the job in its tally. */
  add(name: string, job: Parameters<typeof addToTally>[1]): number {
    const known = this.index.has(name) || this.names.length < this.maxNames;
    const key = known ? name : `\0${this.overflowName}`;
    let at = this.index.get(key);
    if (at === undefined) {
      at = this.names.push(known ? name : this.overflowName) - 1;
      this.tallies.push(emptyTally());
      this.index.set(key, at);
    }
    addToTally(this.tallies[at]!, job);
    return at;
  }
}

/** The page module's import of the view module: in the page the two are one script. */
const VIEW_IMPORT = /^import \{[^}]*\} from '\.\/browser-view\.js';\n/m;
/** The build's copies end with a source map comment: inline, it would point at nothing. */
const SOURCE_MAP = /\n\/\/# sourceMappingURL=\S+\s*$/;

function read(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').replace(SOURCE_MAP, '\n');
}

/**
 * The review page's script as text, to inline: browser-view.js then browser-page.js beside this
 * module (in src/ for tests, copied to dist/ by the build), as one module without the import
 * that joins them. Read on each page written: two small files, no state kept.
 */
export function reviewPageScript(): string {
  const page = read('browser-page.js');
  if (!VIEW_IMPORT.test(page)) throw new Error('bug in mediabatch: browser-page.js does not import browser-view.js as render.ts expects');
  return `${read('browser-view.js')}\n${page.replace(VIEW_IMPORT, '')}`;
}
