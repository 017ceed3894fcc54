/**
 * The review page in a real browser: a real run against the simulator (some jobs fail, some end
 * in doubt), the page it writes opened from file:// in headless Chromium, checked against the
 * ledger. One browser for the file.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReviewPage, type ReviewJob } from '../../src/report/review-page/render.js';
import { startSimulator, type Simulator } from '../../src/sim/index.js';
import { pngImage, transcriptText } from '../../src/sim/results.js';
import { openSqliteLedger, type JobRow, type JobState } from '../../src/store/index.js';
import { jobWindows } from '../../src/runner/windows.js';
import { launchChromium } from '../helpers/browser.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';

const HOSTILE_PROMPT = 'a mug </script><script>alert(1)</script> & <b>bold</b>';
const FAST = { txt2audio: 10, txt2img: 10, img2video: 10, txt2video: 10 };

/** A small mixed batch: speech and images in turn, one video; one prompt that tries to break out of the page. */
function manifestText(): string {
  const speech = ['intro', 'welcome', 'features', 'pricing', 'outro', 'thanks'].map(
    (id, i) => `  - { id: ${id}-${i % 2 === 0 ? 'sky' : 'adam'}, type: txt2audio, voice: ${i % 2 === 0 ? 'af_sky' : 'am_adam'}, text: "The ${id} line, read aloud." }`,
  );
  const images = ['studio', 'kitchen', 'outdoors', 'watercolor'].map((scene) => `  - { id: mug-${scene}, type: txt2img, prompt: "a white ceramic mug, ${scene}" }`);
  return [
    'version: 1',
    'budget: 2.00',
    'defaults:',
    '  txt2audio: { model: Kokoro, voice: af_sky, lang: en-us, speed: 1, format: wav, sample_rate: 24000 }',
    '  txt2img: { model: Flux1schnell, width: 1024, height: 1024, steps: 4, guidance: 0, seed: 1 }',
    '  img2video: { model: Ltxv_13B_0_9_8_Distilled_FP8, width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 }',
    'jobs:',
    ...speech.flatMap((line, i) => [line, ...(images[i] === undefined ? [] : [images[i]])]),
    '  - { id: beach-clip, type: img2video, prompt: "slow waves roll onto the beach", first_frame_image: beach.png }',
    `  - { id: mug-hostile, type: txt2img, prompt: ${JSON.stringify(HOSTILE_PROMPT)} }`,
    '',
  ].join('\n');
}

async function openPage(browser: Browser, file: string, hash = ''): Promise<{ page: Page; requests: string[]; dialogs: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const requests: string[] = [];
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(`${pathToFileURL(file).href}${hash}`);
  await page.locator('html[data-ready="true"]').waitFor({ timeout: 15_000 });
  return { page, requests, dialogs, errors };
}

/** The ids the table shows, in order. */
function shownIds(page: Page): Promise<string[]> {
  return page.locator('#job-rows tr.job').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id') ?? ''));
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** Shows another view of an open page, as a link to it would: the address's hash says which. */
async function show(page: Page, hash: string): Promise<void> {
  await page.goto(`${page.url().replace(/#.*$/, '')}#${hash}`);
}

describe('the review page of a real run, in Chromium', () => {
  let sim: Simulator;
  let dir: string;
  let cleanup: () => Promise<void>;
  let pageFile: string;
  let rows: JobRow[];
  let counts: Record<JobState, number>;
  let spentMicro: number;
  let opened: Awaited<ReturnType<typeof openPage>>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-review-'));
    sim = await startSimulator({ pendingMs: FAST, processingMs: FAST, jobErrorRate: 0.15, errorRetryable: false, faults: 'submit:500-after=0.08', seed: 4 });
    await copyFile(path.join(ROOT, 'manifests/images/beach.png'), path.join(dir, 'beach.png'));
    const manifest = path.join(dir, 'promo.yaml');
    await writeFile(manifest, manifestText());
    // One submit at a time: the seeded faults then fall on the same jobs every time.
    const args = ['run', manifest, '--base-url', sim.url, '--plan', 'unlimited', '--poll-ms', '20', '--concurrency', '1'];
    // The CLI's main in this process: the page it writes, without a start-up.
    const run = await mainInProcess(args, { MEDIABATCH_TOKEN: sim.token });
    expect(run.code, run.stderr).toBe(1);
    // The page the run wrote as it ended; report-command.test.ts checks `report` writes the same jobs.
    pageFile = path.join(dir, 'promo.report.html');
    const ledger = await openSqliteLedger(path.join(dir, 'promo.mediabatch.db'), { mode: 'read-only' });
    try {
      rows = [];
      for await (const row of jobWindows(ledger, { scope: 'report' })) rows.push(row);
      counts = await ledger.countsByState();
      spentMicro = await ledger.spentMicro();
    } finally {
      await ledger.close();
    }
    // What the checks below need from the run: failures, a job in doubt, and results of each kind.
    expect(counts.failed).toBeGreaterThan(0);
    expect(counts.in_doubt).toBeGreaterThan(0);
    expect(rows.some((row) => row.state === 'done' && row.type === 'txt2audio')).toBe(true);
    expect(rows.some((row) => row.state === 'done' && row.type === 'txt2img')).toBe(true);
    opened = await openPage(browser, pageFile);
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
    await cleanup?.();
  });

  it('shows the totals the ledger holds: spent, budget, counts by state, money by kind', async () => {
    const { page } = opened;
    expect(await page.locator('[data-total="spent"]').getAttribute('data-micro')).toBe(String(spentMicro));
    expect(await page.locator('[data-total="budget"]').getAttribute('data-micro')).toBe('2000000');
    for (const state of ['failed', 'in_doubt', 'done'] as const) {
      expect(await page.locator(`#summary [data-filter-state="${state}"]`).getAttribute('data-count')).toBe(String(counts[state]));
    }
    expect(await page.locator('#summary [data-filter-state="failed,in_doubt"]').getAttribute('data-count')).toBe(String(counts.failed + counts.in_doubt));
    const byKind = await page.locator('[data-breakdown="kind"] tr[data-name]').evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-name'), Number(tr.getAttribute('data-jobs')), Number(tr.getAttribute('data-spent-micro'))]),
    );
    const expected = new Map<string, [number, number]>();
    for (const row of rows) {
      const [jobs, spent] = expected.get(row.type) ?? [0, 0];
      expected.set(row.type, [jobs + 1, spent + row.spentMicro]);
    }
    expect(byKind).toEqual([...expected].map(([type, [jobs, spent]]) => [type, jobs, spent]));
    expect(await page.locator('#shown').textContent()).toBe('1–12 of 12 jobs');
    expect(await shownIds(page)).toEqual(rows.map((row) => row.id));
  });

  it('puts failed and in-doubt jobs one click away, with their reasons', async () => {
    const { page } = opened;
    await page.locator('#summary [data-filter-state="failed,in_doubt"]').click();
    const attention = rows.filter((row) => row.state === 'failed' || row.state === 'in_doubt');
    expect(await shownIds(page)).toEqual(attention.map((row) => row.id));
    for (const row of attention) {
      expect(await page.locator(`tr[data-id="${row.id}"] td.error`).textContent()).toBe(row.lastError);
    }
    await page.locator('#summary [data-filter-state="failed"]').click();
    expect(await shownIds(page)).toEqual(rows.filter((row) => row.state === 'failed').map((row) => row.id));
    // The view is in the address: a reload (or a link) shows the same jobs.
    expect(new URL(page.url()).hash).toBe('#state=failed');
    await show(page, '');
    expect(await shownIds(page)).toEqual(rows.map((row) => row.id));
  });

  it('searches ids, prompts and request ids', async () => {
    const { page } = opened;
    await page.locator('#search').fill('CERAMIC MUG, kitchen');
    await expect.poll(() => shownIds(page)).toEqual(['mug-kitchen']);
    const withRequest = rows.find((row) => row.requestId !== null)!;
    await page.locator('#search').fill(withRequest.requestId!.slice(0, 13));
    await expect.poll(() => shownIds(page)).toEqual([withRequest.id]);
    await page.locator('#search').fill('no job says this');
    await expect.poll(() => page.locator('#job-rows').textContent()).toBe('No job matches these filters.');
    await show(page, '');
    expect(await page.locator('#search').inputValue()).toBe('');
    expect(await shownIds(page)).toEqual(rows.map((row) => row.id));
  });

  it('plays a speech result and shows an image result from the files beside the page', async () => {
    const { page } = opened;
    const speech = rows.find((row) => row.state === 'done' && row.type === 'txt2audio')!;
    const audio = page.locator(`tr[data-id="${speech.id}"] audio`);
    expect(await audio.getAttribute('preload')).toBe('none');
    const played = await audio.evaluate(
      (element) =>
        new Promise<{ duration: number; src: string }>((resolve, reject) => {
          element.addEventListener('loadedmetadata', () => resolve({ duration: element.duration, src: element.currentSrc }), { once: true });
          element.addEventListener('error', () => reject(new Error(`cannot play ${element.currentSrc}: error ${element.error?.code}`)), { once: true });
          element.play().catch(reject);
        }),
    );
    expect(played.duration).toBeGreaterThan(0);
    expect(played.src).toBe(pathToFileURL(speech.resultPath!).href);
    await audio.evaluate((element) => element.pause());

    const image = rows.find((row) => row.state === 'done' && row.type === 'txt2img')!;
    const img = page.locator(`tr[data-id="${image.id}"] img`);
    expect(await img.getAttribute('loading')).toBe('lazy');
    await img.scrollIntoViewIfNeeded();
    await expect.poll(() => img.evaluate((element) => element.complete && element.naturalWidth)).toBeGreaterThan(0);

    // A screenshot of the page as it opens (MEDIABATCH_WRITE_SCREENSHOT=1 makes it docs/review-page.md's).
    await page.setViewportSize({ width: 1280, height: 1500 });
    await page.locator('#search').blur();
    await page.locator('header').scrollIntoViewIfNeeded();
    const screenshot = path.join(dir, 'review-page.png');
    await page.screenshot({ path: screenshot });
    expect((await readFile(screenshot)).subarray(1, 4).toString()).toBe('PNG');
    if (process.env['MEDIABATCH_WRITE_SCREENSHOT'] === '1') await copyFile(screenshot, path.join(ROOT, 'docs/review-page.png'));
  });

  it('shows a prompt that tries to break out of the page as text, and loads nothing from the network', async () => {
    const { page, requests, dialogs, errors } = opened;
    expect(await page.locator('tr[data-id="mug-hostile"] td.text').textContent()).toBe(HOSTILE_PROMPT);
    expect(await page.locator('script').count()).toBe(3);
    expect(await page.locator('tr[data-id="mug-hostile"] b').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
  });
});

describe('tags, groups and pages, on a page of 1,500 synthetic jobs', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let pageFile: string;
  let opened: Awaited<ReturnType<typeof openPage>>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-review-'));
    pageFile = path.join(dir, 'tagged.report.html');
    const jobs = function* (): Generator<ReviewJob> {
      for (let i = 0; i < 1_500; i += 1) {
        const scene = `s${String(Math.floor(i / 3) % 250).padStart(3, '0')}`;
        yield {
          id: `clip-${i}`,
          type: 'txt2audio',
          state: i % 50 === 7 ? 'failed' : 'done',
          priceMicro: 1_000,
          spentMicro: 1_000,
          priceSource: 'quoted',
          priceKey: 'v1|txt2audio|Kokoro',
          model: 'Kokoro',
          requestId: `req-${i}`,
          text: `line ${i}`,
          tags: [`scene:${scene}`, `variant:${'abc'[i % 3]}`, ...(i < 3 ? ['pilot'] : [])],
          error: null,
          output: null,
        };
      }
    };
    let html = '';
    for await (const chunk of renderReviewPage(jobs(), { title: 'tagged.yaml', generatedAt: '2026-01-01T00:00:00.000Z', ledger: 'x', spentMicro: 1_500_000, budgetMicro: null, pageDir: dir })) html += chunk;
    await writeFile(pageFile, html);
    opened = await openPage(browser, pageFile);
  }, 60_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it('groups by a tag key so the variants of one scene sit together, and pages through them', async () => {
    const { page, errors } = opened;
    expect(await page.locator('#group-by option').allTextContents()).toEqual(['no grouping', 'tag scene', 'tag variant', 'plain tags', 'kind', 'model', 'price group', 'state']);
    await page.locator('#group-by').selectOption('tag:variant');
    expect(await page.locator('#job-rows tr.group').first().textContent()).toBe('a · 500 jobs');
    expect((await shownIds(page)).slice(0, 3)).toEqual(['clip-0', 'clip-3', 'clip-6']);
    await page.locator('#group-by').selectOption('tag:scene');
    expect(await page.locator('#job-rows tr.group').first().textContent()).toBe('s000 · 6 jobs');
    // A scene's variants sit side by side, though the manifest lists half of them 750 jobs later.
    expect((await shownIds(page)).slice(0, 6)).toEqual(['clip-0', 'clip-1', 'clip-2', 'clip-750', 'clip-751', 'clip-752']);
    expect(await page.locator('#job-rows tr.job').count()).toBe(100);
    await page.locator('.pager').first().getByTitle('next page').click();
    expect(await page.locator('#shown').textContent()).toBe('101–200 of 1,500 jobs');
    await page.locator('.pager').first().getByTitle('last page').click();
    expect(await page.locator('#shown').textContent()).toBe('1,401–1,500 of 1,500 jobs');
    expect(errors).toEqual([]);
  });

  it('filters by a tag, and a tag on a row filters to it in one click', async () => {
    const { page } = opened;
    await show(page, '');
    // 250 scenes, 3 variants and one plain tag, after the "every tag" choice.
    expect(await page.locator('#filter-tag option').count()).toBe(1 + 250 + 3 + 1);
    await page.locator('tr[data-id="clip-1"] button.tag', { hasText: 'pilot' }).click();
    expect(await shownIds(page)).toEqual(['clip-0', 'clip-1', 'clip-2']);
    expect(await page.locator('#filter-tag').inputValue()).toBe('pilot');
    await page.locator('#filter-state').selectOption('failed,in_doubt');
    expect(await shownIds(page)).toEqual([]);
    await page.locator('#filter-tag').selectOption('');
    expect(await page.locator('#shown').textContent()).toBe('1–30 of 30 matching (of 1,500 jobs)');
  });
});

describe('text and embedding results, in Chromium', () => {
  let sim: Simulator;
  let dir: string;
  let cleanup: () => Promise<void>;
  let embeddings: Awaited<ReturnType<typeof openPage>>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-review-'));
    const quick = { txt2embedding: 10, img2txt: 10 };
    sim = await startSimulator({ pendingMs: quick, processingMs: quick });
    const manifest = path.join(dir, 'index.yaml');
    await writeFile(path.join(dir, 'page.png'), pngImage(64));
    const jobs = [
      '  - { id: fox, type: txt2embedding, input: "the quick brown fox" }',
      '  - { id: dog, type: txt2embedding, input: "the lazy dog", return_result_in_response: true }',
      '  - { id: scan, type: img2txt, model: Nanonets_Ocr_S_F16, image: page.png }',
    ];
    await writeFile(manifest, ['version: 1', 'defaults:', '  txt2embedding: { model: Bge_M3_FP16 }', 'jobs:', ...jobs, ''].join('\n'));
    const run = await mainInProcess(['run', manifest, '--base-url', sim.url, '--plan', 'unlimited', '--poll-ms', '20'], { MEDIABATCH_TOKEN: sim.token });
    expect(run.code, run.stderr).toBe(0);
    embeddings = await openPage(browser, path.join(dir, 'index.report.html'));
  }, 60_000);

  afterAll(async () => {
    await sim?.close();
    await cleanup?.();
  });

  it('shows an embedding as its size and first values, its file a click away', async () => {
    const { page, errors } = embeddings;
    for (const id of ['fox', 'dog']) {
      const cell = page.locator(`tr[data-id="${id}"] td.result`);
      expect(await cell.locator('.glimpse').textContent()).toBe('1024 numbers: 0.0841471, 0.0909297, 0.014112, -0.0756802, -0.0958924, …');
      expect(await cell.locator('a.file').getAttribute('href')).toBe(`index.out/${id}.json`);
    }
    expect(errors).toEqual([]);
  });

  it('shows the text an OCR job read as text, escaped, its file a click away', async () => {
    const { page, errors } = embeddings;
    const cell = page.locator('tr[data-id="scan"] td.result');
    // Its "<and>" shows as written: no element made of it.
    expect(await cell.locator('.glimpse').textContent()).toBe(transcriptText().toString('utf8'));
    expect(await cell.locator('and').count()).toBe(0);
    expect(await cell.locator('a.file').getAttribute('href')).toBe('index.out/scan.txt');
    expect(errors).toEqual([]);
  });

  it('shows a text result as text, shortened, its whole file linked; a missing one marked', async () => {
    // Rows of their own: a text longer than the glimpse, and one whose file is gone.
    const hostile = `${HOSTILE_PROMPT} ${'more words '.repeat(30)}`;
    const job = (id: string, glimpse: string | null): ReviewJob => ({
      id, type: 'img2txt', state: 'done', priceMicro: 300, spentMicro: 300, priceSource: 'quoted', priceKey: 'k', model: 'm',
      requestId: `req-${id}`, error: null, output: path.join(dir, 'text.out', `${id}.txt`), glimpse,
    });
    const rows = async function* (): AsyncGenerator<ReviewJob> {
      yield job('page-1', `${hostile.slice(0, 280)}…`);
      yield job('page-2', null);
    };
    let html = '';
    for await (const chunk of renderReviewPage(rows(), { title: 'ocr.yaml', generatedAt: '2026-01-01T00:00:00.000Z', ledger: 'x', spentMicro: 600, budgetMicro: null, pageDir: dir })) html += chunk;
    const file = path.join(dir, 'ocr.report.html');
    await writeFile(file, html);
    const { page, dialogs, errors } = await openPage(browser, file);
    const cell = page.locator('tr[data-id="page-1"] td.result');
    expect(await cell.locator('.glimpse').textContent()).toBe(`${hostile.slice(0, 280)}…`);
    expect(await cell.locator('b').count()).toBe(0);
    expect(await cell.locator('a.file').getAttribute('href')).toBe('text.out/page-1.txt');
    expect(await page.locator('tr[data-id="page-2"] .player').getAttribute('class')).toBe('player text missing');
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('a pipeline: inputs, dependents and blocked jobs, in Chromium', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let opened: Awaited<ReturnType<typeof openPage>>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-review-'));
    await writeFile(path.join(dir, 'poster.png'), pngImage(64));
    await writeFile(path.join(dir, 'narration.wav'), 'RIFF');
    const job = (id: string, type: ReviewJob['type'], extra: Partial<ReviewJob>): ReviewJob => ({
      id, type, state: 'done', priceMicro: 1_000, spentMicro: 1_000, priceSource: 'quoted', priceKey: 'k', model: 'm',
      requestId: `req-${id}`, error: null, output: null, ...extra,
    });
    const rows = [
      job('poster', 'txt2img', { output: path.join(dir, 'poster.png') }),
      job('narration', 'txt2audio', { output: path.join(dir, 'narration.wav') }),
      job('talking', 'aud2video', { state: 'submitted', inputs: { audio: 'narration', first_frame_image: 'poster' } }),
      job('poster-moving', 'img2video', { state: 'pending', inputs: { first_frame_image: 'poster' } }),
      job('scene-2', 'txt2img', { state: 'failed', error: 'WORKER_ERROR: out of memory' }),
      job('scene-2-moving', 'img2video', { state: 'blocked', spentMicro: 0, inputs: { first_frame_image: 'scene-2' }, error: 'input "first_frame_image" failed: WORKER_ERROR: out of memory' }),
      job('logo', 'txt2img', {}),
      ...Array.from({ length: 23 }, (_, i) => job(`badge-${i}`, 'img-upscale', { state: 'pending', inputs: { image: 'logo' } })),
    ];
    let html = '';
    for await (const chunk of renderReviewPage(rows, { title: 'show.yaml', generatedAt: '2026-01-01T00:00:00.000Z', ledger: 'x', spentMicro: 5_000, budgetMicro: null, pageDir: dir })) html += chunk;
    const file = path.join(dir, 'show.report.html');
    await writeFile(file, html);
    opened = await openPage(browser, file);
  }, 60_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it('shows each input with its job: an image result as a thumbnail from disk, another as a link', async () => {
    const { page, errors } = opened;
    const talking = page.locator('tr[data-id="talking"] .links ul.inputs li');
    expect(await talking.allTextContents()).toEqual(['audio ← narration narration.wav', 'first_frame_image ← poster ']);
    const thumbnail = page.locator('tr[data-id="talking"] li[data-field="first_frame_image"] img');
    expect(await thumbnail.getAttribute('src')).toBe('poster.png');
    await thumbnail.scrollIntoViewIfNeeded();
    await thumbnail.evaluate((img) => (img as unknown as { decode: () => Promise<void> }).decode());
    expect(await thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(64);
    expect(await page.locator('tr[data-id="talking"] li[data-field="audio"] a[target]').getAttribute('href')).toBe('narration.wav');
    // An input not done yet: its job, and no file.
    expect(await page.locator('tr[data-id="scene-2-moving"] li[data-field="first_frame_image"] a').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('lists a job\'s dependents, each a link to its row', async () => {
    const { page } = opened;
    expect(await page.locator('tr[data-id="poster"] ul.dependents li').allTextContents()).toEqual(['talking', 'poster-moving']);
    expect(await page.locator('tr[data-id="talking"] ul.dependents').count()).toBe(0);
    // A result many jobs take lists the first of them and counts the rest.
    const badges = await page.locator('tr[data-id="logo"] ul.dependents li').allTextContents();
    expect(badges).toEqual([...Array.from({ length: 20 }, (_, i) => `badge-${i}`), '… and 3 more']);
    await page.locator('tr[data-id="poster"] ul.dependents a', { hasText: 'poster-moving' }).click();
    await page.waitForURL(/#q=poster-moving$/);
    // The page filters on the hash change: a loaded machine may read the rows before it has.
    await expect.poll(() => shownIds(page)).toEqual(['poster-moving']);
    await show(page, '');
  });

  it('filters to the blocked jobs, each with the reason it waits', async () => {
    const { page } = opened;
    expect(await page.locator('#summary [data-filter-state="blocked"]').getAttribute('data-count')).toBe('1');
    await page.locator('#summary [data-filter-state="blocked"]').click();
    await expect.poll(() => shownIds(page)).toEqual(['scene-2-moving']);
    expect(await page.locator('tr[data-id="scene-2-moving"] td.error').textContent()).toBe('input "first_frame_image" failed: WORKER_ERROR: out of memory');
    expect(await page.locator('tr[data-id="scene-2-moving"] .state').getAttribute('class')).toBe('state blocked');
    await page.locator('#filter-state').selectOption('blocked');
    await expect.poll(() => shownIds(page)).toEqual(['scene-2-moving']);
  });
});
