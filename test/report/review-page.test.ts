import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PageMeta, RowTuple } from '../../src/report/review-page/browser-view.js';
import { groupKeyOf } from '../../src/pricing/keys.js';
import { escapeHtml, jsonForScript, type ReviewPageFacts } from '../../src/report/review-page/layout.js';
import { renderReviewPage, resultHref, type ReviewJob } from '../../src/report/review-page/render.js';

const HOSTILE = '</script><script>alert(1)</script> <!-- & \u2028\u2029 "quoted" \'single\'';

const facts: ReviewPageFacts = {
  title: 'promo.yaml',
  generatedAt: '2026-01-02T03:04:05.000Z',
  ledger: '/work/promo.mediabatch.db',
  spentMicro: 1_500_000,
  budgetMicro: 2_000_000,
  pageDir: '/work',
};

function job(id: string, extra: Partial<ReviewJob> = {}): ReviewJob {
  return {
    id,
    type: 'txt2audio',
    state: 'done',
    priceMicro: 500_000,
    spentMicro: 500_000,
    priceSource: 'quoted',
    priceKey: `v1|txt2audio|Kokoro|af_sky|chars=${id.length}`,
    model: 'Kokoro',
    requestId: `req-${id}`,
    error: null,
    output: `/work/promo.out/${id}.wav`,
    ...extra,
  };
}

async function render(jobs: Iterable<ReviewJob> | AsyncIterable<ReviewJob>, pageFacts = facts): Promise<string> {
  let html = '';
  for await (const chunk of renderReviewPage(jobs, pageFacts)) html += chunk;
  return html;
}

/** What the browser gets from a `<script type="application/json">` element: its text, parsed. */
function scriptJson(html: string, id: string): unknown {
  const match = new RegExp(`<script type="application/json" id="${id}">([\\s\\S]*?)</script>`).exec(html);
  if (match === null) throw new Error(`no #${id} in the page`);
  return JSON.parse(match[1]!);
}

describe('the review page renderer', () => {
  it('keeps hostile job text inside the data: no element ends early, and the text comes back exactly', async () => {
    const html = await render([
      job('a', { text: HOSTILE, tags: [HOSTILE, 'scene:intro'], error: HOSTILE }),
      job('b', { type: 'txt2img', prompt: HOSTILE, output: null, state: 'failed' }),
    ]);
    // The three scripts the renderer writes, and no other.
    expect(html.match(/<script/gi)).toHaveLength(3);
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    expect(html).not.toContain('alert(1)</script>');
    expect(html).not.toContain('<!--');
    expect(html).not.toMatch(/[\u2028\u2029]/);
    const rows = scriptJson(html, 'review-rows') as RowTuple[];
    expect(rows[0]?.[9]).toBe(HOSTILE);
    expect(rows[0]?.[10]).toEqual([HOSTILE, 'scene:intro']);
    expect(rows[0]?.[11]).toBe(HOSTILE);
    expect(rows[1]?.[9]).toBe(HOSTILE);
  });

  it('escapes the title and every name it writes as markup', async () => {
    const html = await render([job('a', { model: '<b>m</b>' })], { ...facts, title: '<img src=x onerror=alert(1)>.yaml' });
    expect(html).toContain('<title>&lt;img src=x onerror=alert(1)&gt;.yaml · mediabatch review</title>');
    expect(html).toContain('<td>&lt;b&gt;m&lt;/b&gt;</td>');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>m</b>');
  });

  it('jsonForScript: JSON that parses back to the value, with no character that could end or open markup', () => {
    const value = { text: HOSTILE, nested: ['<', '>', '&', '\u2028'] };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('runs only its own script: the Content-Security-Policy names the inline script and style by hash and forbids loading from elsewhere', async () => {
    const html = await render([job('a')]);
    const csp = (/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '').replaceAll('&#39;', "'");
    const script = /<script type="module">([\s\S]*)<\/script>/.exec(html)?.[1] ?? '';
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(csp).toContain(`script-src ${hash(script)}`);
    expect(csp).toContain(`style-src ${hash(style)}`);
    expect(csp).toContain("default-src 'none'");
    // The two browser modules as one script: the view's functions, then the page that uses them.
    expect(script.indexOf('export function selectRows')).toBeGreaterThan(0);
    expect(script.indexOf('export function startReviewPage')).toBeGreaterThan(script.indexOf('export function selectRows'));
    expect(script).not.toMatch(/^import /m);
    expect(script).not.toContain('sourceMappingURL');
  });

  it('totals every job by state, kind, model and price group, with exact micro-dollars beside what people read', async () => {
    const html = await render([
      job('a'),
      job('bb', { state: 'failed', spentMicro: 0, error: 'refused' }),
      job('c', { state: 'in_doubt', priceMicro: 250_000, spentMicro: 250_000, output: null }),
      job('d', { type: 'txt2img', model: 'Flux1schnell', priceKey: 'v1|txt2img|Flux1schnell|1024', priceMicro: 3_000, spentMicro: 3_000, output: '/work/promo.out/d.png' }),
      job('e', { state: 'pending', priceMicro: null, priceKey: null, priceSource: null, spentMicro: 0, requestId: null, output: null }),
    ]);
    expect(html).toContain('<strong data-total="spent" data-micro="1500000" title="$1.5">$1.50</strong>');
    expect(html).toContain('data-total="budget" data-micro="2000000"');
    expect(html).toContain('data-total="priced" data-micro="1253000"');
    expect(html).toContain('data-filter-state="failed,in_doubt" data-count="2" class="attention"');
    expect(html).toContain('data-filter-state="pending" data-count="1"');
    expect(html).toContain('<tr data-name="Kokoro" data-jobs="4" data-priced-micro="1250000" data-spent-micro="750000">');
    expect(html).toContain('<tr data-name="Flux1schnell" data-jobs="1" data-priced-micro="3000" data-spent-micro="3000">');
    // Speech priced by length: the lengths share one group; the job not priced yet is in none.
    expect(html).toContain('<tr data-name="v1|txt2audio|Kokoro|af_sky" data-jobs="3" data-priced-micro="1250000"');
    expect(html).toContain('<td>txt2audio Kokoro af_sky</td>');
    const meta = scriptJson(html, 'review-meta') as PageMeta;
    expect(meta.kinds.find((k) => k.name === 'txt2img')?.media).toBe('image');
    expect(meta.groups).toEqual(['txt2audio Kokoro af_sky', 'txt2img Flux1schnell 1024']);
    const rows = scriptJson(html, 'review-rows') as RowTuple[];
    expect(rows.map((row) => row[0])).toEqual(['a', 'bb', 'c', 'd', 'e']);
    expect(rows[4]).toEqual(['e', 0, meta.states.indexOf('pending'), null, 0, 0, -1, -1, null, null, [], null, null, 0, null]);
  });

  it('labels a price group without the optional priced fields its jobs leave out (no "undefined")', async () => {
    // The key as pricing makes it for a text-to-image job without loras.
    const params = { model: 'Flux1schnell', width: 512, height: 512, guidance: 3, steps: 4, seed: 1, prompt: 'a fox' };
    const priceKey = groupKeyOf({ type: 'txt2img', params });
    const html = await render([job('img', { type: 'txt2img', model: 'Flux1schnell', priceKey })]);
    const meta = scriptJson(html, 'review-meta') as PageMeta;
    expect(meta.groups).toEqual(['txt2img Flux1schnell 512 512 3 4']);
    expect(html).toContain('<td>txt2img Flux1schnell 512 512 3 4</td>');
    expect(html.slice(0, html.indexOf('<script'))).not.toContain('undefined');
  });

  it('sums price groups past the 2,000th into one entry instead of listing a million', async () => {
    const jobs = Array.from({ length: 2005 }, (_, i) => job(`j${i}`, { priceKey: `v1|txt2img|m|${i}`, type: 'txt2img' }));
    const meta = scriptJson(await render(jobs), 'review-meta') as PageMeta;
    expect(meta.groups).toHaveLength(2001);
    expect(meta.groups.at(-1)).toBe('other price groups');
  });

  it('streams: the first rows are written before the last job is read', async () => {
    let read = 0;
    async function* many(): AsyncGenerator<ReviewJob> {
      for (let i = 0; i < 5_000; i += 1) {
        read += 1;
        yield job(`j${i}`);
      }
    }
    const chunks = renderReviewPage(many(), facts);
    await chunks.next(); // the page's head
    await chunks.next(); // the opening of the rows' script
    const firstRows = await chunks.next();
    expect(firstRows.value).toMatch(/^\["j0",/);
    expect(read).toBeLessThan(1_000);
    await chunks.return(undefined);
  });

  it('links results relative to the page, each path segment encoded', () => {
    expect(resultHref('/work/promo.out/a.wav', '/work')).toBe('promo.out/a.wav');
    expect(resultHref('/work/out/#1 ?x%:y.png', '/work')).toBe('out/%231%20%3Fx%25%3Ay.png');
    expect(resultHref('/elsewhere/r/javascript:alert(1).png', '/work')).toBe('../elsewhere/r/javascript%3Aalert(1).png');
    expect(resultHref(path.join('/work', 'a', 'b.mp4'), '/work/a')).toBe('b.mp4');
  });
});

describe('a pipeline on the review page', () => {
  it('carries a job\'s inputs on its row, and leaves every other row as short as it was', async () => {
    const html = await render([job('poster', { type: 'txt2img' }), job('talking', { type: 'aud2video', state: 'blocked', inputs: { first_frame_image: 'poster' } })]);
    const rows = scriptJson(html, 'review-rows') as RowTuple[];
    expect(rows[0]).toHaveLength(15);
    expect(rows[1]?.[15]).toEqual({ first_frame_image: 'poster' });
    expect(html).toContain('data-filter-state="blocked" data-count="1"');
  });
});
