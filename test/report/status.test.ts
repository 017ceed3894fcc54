import { parse } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCsv } from '../../src/report/csv.js';
import { formatStatusText, statusJobJson, statusJsonHead, submittedLines, type ListedJobs, type StatusJob, type StatusSummary } from '../../src/report/status.js';

const none: ListedJobs = { jobs: [], total: 0 };
const listed = (jobs: StatusJob[]): ListedJobs => ({ jobs, total: jobs.length });

const WAVES: StatusJob = { id: 'waves', type: 'img2video', state: 'in_doubt', requestId: null, priceMicro: 400_000, output: null, error: 'connection reset after the body was sent' };
const SUMMARY: StatusSummary = {
  counts: { pending: 1, submitting: 0, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0 },
  spentMicro: 1_234_500,
  budgetMicro: 5_000_000,
  inDoubt: listed([WAVES]),
  failed: listed([{ id: 'dusk', type: 'img2video', state: 'failed', requestId: 'r-3', priceMicro: 400_000, output: null, error: 'WORKER_ERROR: out of memory,\nnot retryable' }]),
  notCollected: none,
  statusUnknown: none,
  dropped: 0,
  results: { files: 2, folder: '/data/show.out' },
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
  it("has the run and status fields scripts rely on", () => {
    const json = statusJsonHead(SUMMARY);
    expect(Object.keys(json)).toEqual(['counts', 'spent', 'budget']);
    expect(json.counts).toEqual({ pending: 1, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0, submitting: 0 });
    expect(statusJobJson(WAVES)).toEqual({
      id: 'waves',
      type: 'img2video',
      state: 'in_doubt',
      request_id: null,
      price: 0.4,
      output: null,
      error: 'connection reset after the body was sent',
      in_manifest: true,
      collect_issue: null,
    });
  });
});

describe('submitted jobs a run could not collect', () => {
  const b: StatusJob = { id: 'b', type: 'txt2audio', state: 'submitted', requestId: 'r-b', priceMicro: 100_000, output: null, error: 'result refused: over 110 MB', issue: 'not_collected' };
  const c: StatusJob = { id: 'c', type: 'txt2audio', state: 'submitted', requestId: 'r-c', priceMicro: 100_000, output: null, error: 'the service does not know request r-c (404)', issue: 'status_unknown' };
  const left: StatusSummary = {
    counts: { pending: 0, submitting: 0, submitted: 3, done: 0, failed: 0, in_doubt: 0, skipped: 0 },
    spentMicro: 300_000,
    budgetMicro: null,
    inDoubt: none,
    failed: none,
    notCollected: listed([b]),
    statusUnknown: listed([c]),
    dropped: 0,
    results: { files: 0, folder: null },
  };

  it('are listed with their request ids and reasons, apart from jobs still running', () => {
    expect(formatStatusText(left, { color: false })).toContain(`Paid, result not collected: 1 job(s)
The service finished these jobs, but their results could not be saved. They stay submitted:
every run tries to collect them again (nothing is sent or paid again).
  id  request id  reason
  b   r-b         result refused: over 110 MB

Status unknown: 1 job(s)
These requests were sent, and may be paid for, but the service could not say how they are.
They stay submitted: every run asks again. Their request ids are the only handle on the results.
  id  request id  reason
  c   r-c         the service does not know request r-c (404)

1 job(s) still running at the service: run again to collect them.`);
    expect(submittedLines(left)).toEqual([
      '1 job(s) still running at the service',
      '1 job(s) done at the service (paid for) but the result not collected: b (request r-b): result refused: over 110 MB',
      '1 job(s) whose status is unknown: c (request r-c): the service does not know request r-c (404)',
    ]);
    expect([b, c].map(statusJobJson).map((job) => [job.id, job.state, job.collect_issue])).toEqual([
      ['b', 'submitted', 'not_collected'],
      ['c', 'submitted', 'status_unknown'],
    ]);
  });
});

describe('submittedLines', () => {
  it('lists three jobs of a group and counts the rest', () => {
    const jobs = [1, 2, 3, 4, 5].map((i) => ({
      id: `j${i}`,
      type: 'txt2audio',
      state: 'submitted',
      requestId: `r${i}`,
      priceMicro: 100_000,
      output: null,
      error: 'cut short',
      issue: 'not_collected' as const,
    }));
    const summary: StatusSummary = {
      ...SUMMARY,
      counts: { ...SUMMARY.counts, submitted: 5 },
      notCollected: listed(jobs),
      statusUnknown: none,
    };
    expect(submittedLines(summary)).toEqual([
      '5 job(s) done at the service (paid for) but the result not collected: j1 (request r1): cut short; j2 (request r2): cut short; j3 (request r3): cut short; and 2 more (mediabatch status lists them)',
    ]);
  });
});

describe('jobsCsv', () => {
  it('quotes commas, quotes and newlines, and writes micro-dollar prices as exact dollars', () => {
    const csv = jobsCsv([
      { id: 'a', type: 'txt2audio', model: 'Kokoro', state: 'failed', price_usd: 77, price_source: 'derived', request_id: 'r-1', output: '', error: 'bad "voice", try\nagain' },
      { id: 'b', type: 'img2video', model: 'Ltx', state: '', price_usd: null, price_source: '', request_id: '', output: parse('/x/b.mp4').base, error: '' },
    ]);
    expect(csv).toBe(
      'id,type,model,state,price_usd,price_source,request_id,output,error\n' +
        'a,txt2audio,Kokoro,failed,0.000077,derived,r-1,,"bad ""voice"", try\nagain"\n' +
        'b,img2video,Ltx,,,,,b.mp4,\n',
    );
  });

  it('writes the header even with no rows', () => {
    expect(jobsCsv([])).toBe('id,type,model,state,price_usd,price_source,request_id,output,error\n');
  });
});
