import { parse } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCsvChunks } from '../../src/report/csv.js';
import { statusJsonChunks } from '../../src/report/documents.js';
import { formatStatusText, statusMarkdown, submittedLines, type ListedJobs, type StatusJob, type StatusSummary } from '../../src/report/status.js';
import { textOf } from '../helpers/chunks.js';

interface StatusJsonJob {
  id: string;
  state: string;
  collect_issue: string | null;
}

/** A summary over these jobs, as runner/reports.ts reads one from the ledger, and the jobs themselves. */
type Summed = StatusSummary & { rows: StatusJob[] };
function summaryOf(base: Pick<StatusSummary, 'counts' | 'spentMicro' | 'budgetMicro'>, rows: StatusJob[]): Summed {
  const listed = (keep: (job: StatusJob) => boolean): ListedJobs => {
    const jobs = rows.filter(keep);
    return { jobs, total: jobs.length };
  };
  const outputs = rows.filter((job) => job.output !== null);
  return {
    ...base,
    inDoubt: listed((job) => job.state === 'in_doubt'),
    failed: listed((job) => job.state === 'failed'),
    notCollected: listed((job) => job.state === 'submitted' && job.issue === 'not_collected'),
    statusUnknown: listed((job) => job.state === 'submitted' && job.issue === 'status_unknown'),
    dropped: listed((job) => job.inManifest === false),
    results: { files: outputs.length, folder: outputs[0]?.output == null ? null : parse(outputs[0].output).dir },
    rows,
  };
}

async function statusJson(summary: Summed, run?: { finished: boolean }) {
  return JSON.parse(await textOf(statusJsonChunks(summary, summary.rows, run))) as Record<string, unknown> & { counts: unknown; jobs: StatusJsonJob[] };
}

const jobsCsv = (rows: StatusJob[]) => textOf(runCsvChunks(rows));

const SUMMARY: Summed = summaryOf(
  {
    counts: { pending: 1, submitting: 0, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0, blocked: 0 },
    spentMicro: 1_234_500,
    budgetMicro: 5_000_000,
  },
  [
    { id: 'intro', type: 'txt2audio', state: 'done', requestId: 'r-1', priceMicro: 77, output: '/data/show.out/intro.mp3', error: null },
    { id: 'waves', type: 'img2video', state: 'in_doubt', requestId: null, priceMicro: 400_000, output: null, error: 'connection reset after the body was sent' },
    { id: 'dusk', type: 'img2video', state: 'failed', requestId: 'r-3', priceMicro: 400_000, output: null, error: 'WORKER_ERROR: out of memory,\nnot retryable' },
    { id: 'outro', type: 'txt2audio', state: 'done', requestId: 'r-4', priceMicro: 100, output: '/data/show.out/outro.mp3', error: null },
  ],
);

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
        blocked       0

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

describe('the status and run documents', () => {
  it("has the run and status fields scripts rely on", async () => {
    const json = await statusJson(SUMMARY);
    expect(Object.keys(json)).toEqual(['schema_version', 'counts', 'spent', 'budget', 'jobs']);
    expect(json.counts).toEqual({ pending: 1, submitted: 2, done: 3, failed: 1, in_doubt: 1, skipped: 0, submitting: 0 });
    expect(json.jobs[1]).toEqual({
      id: 'waves',
      type: 'img2video',
      state: 'in_doubt',
      request_id: null,
      price: 0.4,
      output: null,
      error: 'connection reset after the body was sent',
      tags: [],
      model: null,
      price_source: null,
      in_manifest: true,
      collect_issue: null,
      retryable: null,
      refunded: null,
    });
  });

  it('the run document says which run wrote it before the jobs', async () => {
    const json = await statusJson(SUMMARY, { finished: false });
    expect(Object.keys(json)).toEqual(['schema_version', 'counts', 'spent', 'budget', 'kind', 'finished', 'jobs']);
    expect(json).toMatchObject({ kind: 'run', finished: false });
  });

  it('carries the tags a job has', async () => {
    const tagged = summaryOf(SUMMARY, [{ ...SUMMARY.rows[0]!, tags: ['book', 'en'] }]);
    expect((await statusJson(tagged)).jobs[0]).toMatchObject({ id: 'intro', tags: ['book', 'en'] });
    expect((await jobsCsv(tagged.rows)).split('\n')[1]).toMatch(/,book;en,,,yes$/);
  });
});

describe('statusMarkdown', () => {
  it('counts, money and the jobs that need a person', () => {
    expect(statusMarkdown(SUMMARY, 'show.yaml')).toMatchInlineSnapshot(`
      "# Status: show.yaml

      ## Jobs by state

      | state | jobs |
      | --- | ---: |
      | pending | 1 |
      | submitted | 2 |
      | done | 3 |
      | failed | 1 |
      | in_doubt | 1 |
      | skipped | 0 |
      | blocked | 0 |

      ## Money

      |  | amount |
      | --- | ---: |
      | Spent | $1.2345 |
      | Budget | $5.00 |
      | Left | $3.7655 |

      ## In doubt (may have been paid; sent again only with --resubmit-in-doubt): 1

      | id | type | price | request id | reason |
      | --- | --- | ---: | --- | --- |
      | waves | img2video | $0.40 |  | connection reset after the body was sent |

      ## Failed: 1

      | id | type | price | request id | reason |
      | --- | --- | ---: | --- | --- |
      | dusk | img2video | $0.40 | r-3 | WORKER_ERROR: out of memory, not retryable |
      "
    `);
  });
});

describe('submitted jobs a run could not collect', () => {
  const left = summaryOf(
    {
      counts: { pending: 0, submitting: 0, submitted: 3, done: 0, failed: 0, in_doubt: 0, skipped: 0, blocked: 0 },
      spentMicro: 300_000,
      budgetMicro: null,
    },
    [
      { id: 'a', type: 'txt2audio', state: 'submitted', requestId: 'r-a', priceMicro: 100_000, output: null, error: null, issue: null },
      { id: 'b', type: 'txt2audio', state: 'submitted', requestId: 'r-b', priceMicro: 100_000, output: null, error: 'result refused: over 110 MB', issue: 'not_collected' },
      { id: 'c', type: 'txt2audio', state: 'submitted', requestId: 'r-c', priceMicro: 100_000, output: null, error: 'the service does not know request r-c (404)', issue: 'status_unknown' },
    ],
  );

  it('are listed with their request ids and reasons, apart from jobs still running', async () => {
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
    expect((await statusJson(left)).jobs.map((job) => [job.id, job.state, job.collect_issue])).toEqual([
      ['a', 'submitted', null],
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
    const five = summaryOf({ ...SUMMARY, counts: { ...SUMMARY.counts, submitted: 5 } }, jobs);
    expect(submittedLines(five)).toEqual([
      '5 job(s) done at the service (paid for) but the result not collected: j1 (request r1): cut short; j2 (request r2): cut short; j3 (request r3): cut short; and 2 more (mediabatch status lists them)',
    ]);
  });
});

describe('the run CSV', () => {
  it('quotes commas, quotes and newlines, and writes micro-dollar prices as exact dollars', async () => {
    const csv = await jobsCsv([
      { id: 'a', type: 'txt2audio', model: 'Kokoro', state: 'failed', priceMicro: 77, priceSource: 'derived', requestId: 'r-1', output: null, error: 'bad "voice", try\nagain', retryable: true, refunded: false },
      { id: 'b', type: 'img2video', model: 'Ltx', state: 'done', priceMicro: null, priceSource: null, requestId: null, output: parse('/x/b.mp4').base, error: null, inManifest: false },
    ]);
    expect(csv).toBe(
      'id,type,model,state,price_usd,price_source,request_id,output,error,tags,retryable,refunded,in_manifest\n' +
        'a,txt2audio,Kokoro,failed,0.000077,derived,r-1,,"bad ""voice"", try\nagain",,yes,no,yes\n' +
        'b,img2video,Ltx,done,,,,b.mp4,,,,,no\n',
    );
  });

  it('writes the header even with no rows', async () => {
    expect(await jobsCsv([])).toBe('id,type,model,state,price_usd,price_source,request_id,output,error,tags,retryable,refunded,in_manifest\n');
  });

  it('streams many rows in batches with one header', async () => {
    const rows = Array.from({ length: 2_500 }, (_, i) => ({ ...SUMMARY.rows[0]!, id: `job-${i}` }));
    const lines = (await jobsCsv(rows)).trimEnd().split('\n');
    expect(lines).toHaveLength(2_501);
    expect(lines.filter((line) => line.startsWith('id,'))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^job-2499,/);
  });
});
