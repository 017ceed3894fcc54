/**
 * The review page at scale: 100,000 synthetic jobs (BENCH_REVIEW_JOBS) through the real renderer
 * into a file, then that file opened from file:// in headless Chromium. Prints and returns the
 * page's size, the render time, and the browser's own timings: first paint, first contentful
 * paint, and the mark the page sets once its table is filled and its controls answer. Then one
 * click on the "failed" filter and one page turn, each timed inside the page.
 *
 * Part of `npm run bench`; alone: `node --expose-gc dist/bench/review-page.js`.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderReviewPage, type ReviewJob } from '../src/report/review-page/render.js';
import { launchChromium } from './chromium.js';

export interface ReviewPageFigures {
  jobs: number;
  sizeMb: number;
  bytesPerJob: number;
  renderMs: number;
  /** Medians over `loads` loads of the page, each in a new tab. */
  loads: number;
  firstPaintMs: number | null;
  firstContentfulPaintMs: number | null;
  interactiveMs: number;
  loadEventMs: number;
  filterFailedMs: number;
  nextPageMs: number;
  jsHeapMb: number | null;
  browser: string;
}

const LOADS = 3;
const SPEECH = 'Chapter {i}. The tide comes in, as it always has, and the boats wait in the harbour for the light to turn.';

/** Jobs shaped like a real batch: mostly speech, some images and clips, a few failed or in doubt. */
function* syntheticJobs(count: number, dir: string): Generator<ReviewJob> {
  for (let i = 0; i < count; i += 1) {
    const kind = i % 10 < 7 ? 'txt2audio' : i % 10 < 9 ? 'txt2img' : 'img2video';
    const state = i % 20 === 3 ? 'failed' : i % 97 === 5 ? 'in_doubt' : i % 50 === 11 ? 'pending' : 'done';
    const id = `${kind === 'txt2audio' ? 'line' : kind === 'txt2img' ? 'still' : 'clip'}-${String(i).padStart(6, '0')}`;
    const text = kind === 'txt2audio' ? SPEECH.replace('{i}', String(i)) : null;
    const priceMicro = kind === 'txt2audio' ? 30 + (i % 40) : kind === 'txt2img' ? 4_195 : 39_814;
    yield {
      id,
      type: kind,
      state,
      priceMicro,
      spentMicro: state === 'failed' || state === 'pending' ? 0 : priceMicro,
      priceSource: i % 3 === 0 ? 'derived' : 'quoted',
      priceKey: kind === 'txt2audio' ? `v1|txt2audio|Kokoro|af_sky|en-us|1|wav|24000|chars=${text?.length ?? 0}` : `v1|${kind}|model-${i % 4}|1024|1024`,
      model: kind === 'txt2audio' ? 'Kokoro' : `model-${i % 4}`,
      requestId: state === 'pending' ? null : `${(i * 2_654_435_761 >>> 0).toString(16).padStart(8, '0')}-9d05-44c3-94ae-${String(i).padStart(12, '0')}`,
      text,
      prompt: kind === 'txt2audio' ? null : `a white ceramic mug, scene ${i % 2000}, soft morning light, variant ${i % 3}`,
      tags: [`scene:s${i % 2000}`, `variant:${'abc'[i % 3]}`],
      error: state === 'failed' ? 'WORKER_ERROR: The worker failed while generating.: worker_crashed' : state === 'in_doubt' ? 'timeout after the body was sent' : null,
      output: state === 'done' ? path.join(dir, 'bench.out', `${id}.${kind === 'txt2audio' ? 'wav' : kind === 'txt2img' ? 'png' : 'mp4'}`) : null,
    };
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function reviewPageBench(jobs: number): Promise<ReviewPageFigures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mediabatch-review-bench-'));
  const file = path.join(dir, 'bench.report.html');
  try {
    const started = performance.now();
    const facts = { title: 'bench.yaml', generatedAt: new Date().toISOString(), ledger: 'bench.mediabatch.db', spentMicro: 0, budgetMicro: null, pageDir: dir };
    await pipeline(Readable.from(renderReviewPage(syntheticJobs(jobs, dir), facts)), createWriteStream(file));
    const renderMs = performance.now() - started;
    const { size } = await stat(file);
    const browser = await launchChromium();
    try {
      const loads: Omit<ReviewPageFigures, 'jobs' | 'sizeMb' | 'bytesPerJob' | 'renderMs' | 'loads' | 'browser'>[] = [];
      for (let n = 0; n < LOADS; n += 1) loads.push(await loadOnce(browser, file));
      const pick = <K extends keyof (typeof loads)[number]>(key: K): number[] => loads.map((load) => load[key] as number);
      const nullable = (key: 'firstPaintMs' | 'firstContentfulPaintMs' | 'jsHeapMb'): number | null =>
        loads.some((load) => load[key] === null) ? null : median(pick(key));
      return {
        jobs,
        sizeMb: size / 2 ** 20,
        bytesPerJob: size / jobs,
        renderMs,
        loads: LOADS,
        firstPaintMs: nullable('firstPaintMs'),
        firstContentfulPaintMs: nullable('firstContentfulPaintMs'),
        interactiveMs: median(pick('interactiveMs')),
        loadEventMs: median(pick('loadEventMs')),
        filterFailedMs: median(pick('filterFailedMs')),
        nextPageMs: median(pick('nextPageMs')),
        jsHeapMb: nullable('jsHeapMb'),
        browser: browser.version(),
      };
    } finally {
      await browser.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One load in a new tab; every time is the browser's own, from the start of the navigation. */
async function loadOnce(browser: Awaited<ReturnType<typeof launchChromium>>, file: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 120_000 });
    await page.locator('html[data-ready="true"]').waitFor({ timeout: 120_000 });
    const timings = await page.evaluate(() => {
      const paint = (name: string): number | null => performance.getEntriesByName(name)[0]?.startTime ?? null;
      // Node's types know no navigation entry; the page's performance has one.
      const navigation = (performance.getEntriesByType as unknown as (type: string) => { loadEventEnd: number }[])('navigation')[0];
      const memory = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
      return {
        firstPaintMs: paint('first-paint'),
        firstContentfulPaintMs: paint('first-contentful-paint'),
        interactiveMs: paint('review-interactive') ?? Number.NaN,
        loadEventMs: navigation?.loadEventEnd ?? Number.NaN,
        jsHeapMb: memory === undefined ? null : memory.usedJSHeapSize / 2 ** 20,
      };
    });
    // The handlers run synchronously: filtering 100,000 rows and drawing the first page of them.
    const timedClick = (selector: string): Promise<number> =>
      page.locator(selector).first().evaluate((element) => {
        const start = performance.now();
        (element as { click(): void }).click();
        return performance.now() - start;
      });
    const nextPageMs = await timedClick('.pager button[title="next page"]');
    const filterFailedMs = await timedClick('#summary [data-filter-state="failed"]');
    return { ...timings, filterFailedMs, nextPageMs };
  } finally {
    await page.close();
  }
}

export function formatReviewPageFigures(f: ReviewPageFigures): [string, string][] {
  const ms = (value: number | null): string => (value === null ? 'n/a' : `${value.toFixed(0)} ms`);
  return [
    [`review page, ${f.jobs.toLocaleString('en-US')} jobs`, `${f.sizeMb.toFixed(1)} MB (${f.bytesPerJob.toFixed(0)} bytes a job), rendered in ${ms(f.renderMs)}`],
    ['  in Chromium (median of 3 loads)', `first paint ${ms(f.firstPaintMs)}, first contentful paint ${ms(f.firstContentfulPaintMs)}, table interactive ${ms(f.interactiveMs)}, load ${ms(f.loadEventMs)}`],
    ['  then', `filter to failed ${ms(f.filterFailedMs)}, next page ${ms(f.nextPageMs)}, JS heap ${f.jsHeapMb === null ? 'n/a' : `${f.jsHeapMb.toFixed(0)} MB`} (${f.browser})`],
  ];
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const figures = await reviewPageBench(Number(process.env['BENCH_REVIEW_JOBS'] ?? 100_000));
  for (const [what, value] of formatReviewPageFigures(figures)) process.stdout.write(`${what.padEnd(36)}  ${value}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
