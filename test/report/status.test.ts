import { parse } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCsv } from '../../src/report/csv.js';
import { formatStatusText, statusJson, type StatusSummary } from '../../src/report/status.js';

const SUMMARY: StatusSummary = {
  counts: { pending: 1, submitting: 0, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0 },
  spentUsd: 1.2345,
  budgetUsd: 5,
  jobs: [
    { id: 'intro', type: 'txt2audio', state: 'done', requestId: 'r-1', priceUsd: 0.000077, output: '/data/show.out/intro.mp3', error: null },
    { id: 'waves', type: 'img2video', state: 'in_doubt', requestId: null, priceUsd: 0.4, output: null, error: 'connection reset after the body was sent' },
    { id: 'dusk', type: 'img2video', state: 'failed', requestId: 'r-3', priceUsd: 0.4, output: null, error: 'WORKER_ERROR: out of memory,\nnot retryable' },
    { id: 'outro', type: 'txt2audio', state: 'done', requestId: 'r-4', priceUsd: 0.0001, output: '/data/show.out/outro.mp3', error: null },
  ],
};

describe('formatStatusText', () => {
  it('lists counts, money, jobs in doubt with what to do, failures and where results are', () => {
    expect(formatStatusText(SUMMARY, { color: false })).toMatchInlineSnapshot(`
      "Jobs by state
        state      jobs
        pending       1
        submitted     2
        done          3
        failed        1
        in_doubt      1
        skipped       0

      Spent $1.23 of the $5.00 budget ($3.77 left)

      In doubt: 1 job(s)
      These requests may have reached the service and may have been paid: their price counts as spent.
      They are never sent again automatically. Check your balance or billing first; to send them once
      more, run again with --resubmit-in-doubt.
        id     type       price  reason
        waves  img2video  $0.40  connection reset after the body was sent

      Failed: 1 job(s)
        id    type       reason
        dusk  img2video  WORKER_ERROR: out of memory, not retryable

      2 job(s) still running at the service: run again to collect them.
      1 job(s) not sent yet.

      Results: 2 file(s) in /data/show.out
      "
    `);
  });
});

describe('statusJson', () => {
  it("has PRODUCT.md's run and status fields", () => {
    const json = statusJson(SUMMARY);
    expect(Object.keys(json)).toEqual(['counts', 'spent', 'budget', 'jobs']);
    expect(json.counts).toEqual({ pending: 1, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0, submitting: 0 });
    expect(json.jobs[1]).toEqual({
      id: 'waves',
      type: 'img2video',
      state: 'in_doubt',
      request_id: null,
      price: 0.4,
      output: null,
      error: 'connection reset after the body was sent',
      in_manifest: true,
    });
  });
});

describe('jobsCsv', () => {
  it('quotes commas, quotes and newlines, and writes prices without exponents', () => {
    const csv = jobsCsv([
      { id: 'a', type: 'txt2audio', model: 'Kokoro', state: 'failed', price_usd: 7.7e-7, price_source: 'derived', request_id: 'r-1', output: '', error: 'bad "voice", try\nagain' },
      { id: 'b', type: 'img2video', model: 'Ltx', state: '', price_usd: null, price_source: '', request_id: '', output: parse('/x/b.mp4').base, error: '' },
    ]);
    expect(csv).toBe(
      'id,type,model,state,price_usd,price_source,request_id,output,error\n' +
        'a,txt2audio,Kokoro,failed,0.00000077,derived,r-1,,"bad ""voice"", try\nagain"\n' +
        'b,img2video,Ltx,,,,,b.mp4,\n',
    );
  });

  it('writes the header even with no rows', () => {
    expect(jobsCsv([])).toBe('id,type,model,state,price_usd,price_source,request_id,output,error\n');
  });
});
