import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { microToUsd } from '../../src/money.js';
import type { EventRow, JobRow } from '../../src/store/index.js';
import { hasStackTrace, runCli } from '../helpers/cli.js';
import { seed } from '../store/contract/fixtures.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST, mainAgainst } from '../reliability/helpers.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { openSqliteLedger } from '../../src/store/index.js';

/** Every event of the ledger, read through the interface in windows as `log` does, and one job's row. */
async function readLedger(file: string, jobId: string): Promise<{ events: EventRow[]; job: JobRow }> {
  const ledger = await openSqliteLedger(file, { mode: 'read-only' });
  try {
    const events: EventRow[] = [];
    for (let window = await ledger.readEvents({ afterId: 0, limit: 7 }); window.length > 0; window = await ledger.readEvents({ afterId: window.at(-1)!.id, limit: 7 })) {
      events.push(...window);
    }
    const job = await ledger.getJob(jobId);
    if (job === undefined) throw new Error(`no job ${jobId} in ${file}`);
    return { events, job };
  } finally {
    await ledger.close();
  }
}

const jsonl = (stdout: string): Record<string, unknown>[] =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('mediabatch log', () => {
  const workspace = useWorkspace();

  it("prints the ledger's event history oldest first, as JSON Lines or CSV, for every job or one", async () => {
    const sim = await workspace.startSim(FAST);
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 3 });
    // The run only fills the ledger (its lock taken as the CLI takes it): the CLI's main in this process.
    const ran = await mainAgainst(sim, ['run', manifest]);
    expect(ran.code, ran.stderr).toBe(0);
    const db = path.join(workspace.dir, 'batch.mediabatch.db');
    const { events, job } = await readLedger(db, 'line-00001');
    expect(events.length).toBeGreaterThan(10);

    // Through a process once (what reaches its stdout); the other views through the CLI's main in this process.
    const all = await runCli(['log', manifest]);
    expect(all.code, all.stderr).toBe(0);
    const lines = jsonl(all.stdout);
    expect(lines.map((line) => line['id'])).toEqual(events.map((event) => event.id));
    expect(Object.keys(lines[0]!)).toEqual(['id', 'at', 'job_id', 'event', 'from_state', 'to_state', 'detail']);
    const done = events.find((event) => event.kind === 'done' && event.jobId === 'line-00001')!;
    // The ledger's detail ({ path, bytes, sha256, spentMicro }) with snake_case keys and money in dollars.
    const detail = { path: job.resultPath, bytes: job.resultBytes, sha256: job.resultSha256, spent_usd: microToUsd(job.spentMicro) };
    expect(lines.find((line) => line['id'] === done.id)).toEqual({
      id: done.id,
      at: done.at,
      job_id: 'line-00001',
      event: 'done',
      from_state: 'submitted',
      to_state: 'done',
      detail,
    });

    const csv = await mainInProcess(['log', manifest, '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const csvLines = csv.stdout.trimEnd().split('\n');
    expect(csvLines[0]).toBe('id,at,job_id,event,from_state,to_state,detail');
    expect(csvLines).toHaveLength(events.length + 1);
    expect(csvLines.find((line) => line.startsWith(`${done.id},`))).toBe(
      `${done.id},${done.at},line-00001,done,submitted,done,"${JSON.stringify(detail).replaceAll('"', '""')}"`,
    );

    const one = await mainInProcess(['log', manifest, '--job', 'line-00001']);
    expect(one.code, one.stderr).toBe(0);
    expect(jsonl(one.stdout).map((line) => [line['job_id'], line['event'], line['from_state'], line['to_state']])).toEqual([
      ['line-00001', 'reserved', 'pending', 'submitting'],
      ['line-00001', 'submitted', 'submitting', 'submitted'],
      ['line-00001', 'done', 'submitted', 'done'],
    ]);

    const unknown = await mainInProcess(['log', manifest, '--job', 'line-09999']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      `mediabatch: --job "line-09999": the ledger ${db} holds no job with this id; \`mediabatch status ${manifest}\` lists the jobs\n`,
    );
    expect(hasStackTrace(unknown.stderr)).toBe(false);
  });

  it("escapes the service's text (same data once parsed) and guards CSV cells against formulas", async () => {
    const db = path.join(workspace.dir, 'other.mediabatch.db');
    const reason = 'rejected \u001b]0;owned\u0007 by =HYPERLINK("http://x") \u202egnp.exe\u2028next';
    const ledger = await openSqliteLedger(db, { mode: 'read-write' });
    try {
      await seed(ledger, { '-danger': 16 });
      await ledger.reserveForSubmit('-danger', null, ['pending']);
      await ledger.markRefused('-danger', reason);
    } finally {
      await ledger.close();
    }
    const manifest = path.join(workspace.dir, 'other.yaml');

    const out = await mainInProcess(['log', manifest, '--db', db, '--job=-danger']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).not.toMatch(/[\u001b\u0007\u202e\u2028]/);
    expect(out.stdout).toContain('\\u001b]0;owned\\u0007 by =HYPERLINK(\\"http://x\\") \\u202egnp.exe\\u2028next');
    expect(jsonl(out.stdout).at(-1)).toMatchObject({ job_id: '-danger', event: 'refused', detail: { reason, spent_usd: 0 } });

    const csv = await mainInProcess(['log', manifest, '--db', db, '--job=-danger', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).not.toMatch(/[\u001b\u0007\u202e\u2028]/);
    const refused = csv.stdout.trimEnd().split('\n').at(-1)!;
    expect(refused).toMatch(/^\d+,[^,]+,'-danger,refused,submitting,failed,"\{""reason"":""rejected \\u001b\]0;owned\\u0007 by =HYPERLINK/);
  });
});
