import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatStatusText } from '../../src/report/status.js';
import { summarize } from '../../src/runner/reports.js';
import { writeReviewPage } from '../../src/runner/reports.js';
import { runInProcess } from '../helpers/in-process.js';
import { useWorkspace } from '../helpers/workspace.js';
import { FAST } from '../reliability/helpers.js';
import { speechManifest } from '../security/servers.js';
import { openMemoryLedger } from '../support/memory-ledger/memory-ledger.js';

describe('results of jobs removed from the manifest after they were sent', () => {
  const workspace = useWorkspace();

  it('stay in status, the run files and the review page, with their files, marked as no longer in the manifest', async () => {
    const sim = await workspace.startSim(FAST);
    const dir = workspace.dir;
    const manifest = path.join(dir, 'show.yaml');
    const jobs = ['intro', 'middle', 'outro'].map((id) => ({ id, text: `the ${id}` }));
    await writeFile(manifest, speechManifest(jobs));
    const ledgerPath = path.join(dir, 'show.mediabatch.db');
    const outDir = path.join(dir, 'show.out');
    // What a summary shows is the point, not the file: each run reads the ledger the last one left.
    const kept = openMemoryLedger();
    const run = (noWait: boolean) => runInProcess({ manifest, ledgerPath, ledger: kept, outDir, baseUrl: sim.url, token: sim.token, noWait });
    await run(true);
    await writeFile(manifest, speechManifest(jobs.slice(0, 1)));
    await run(false);
    expect(sim.stats.accepted).toHaveLength(3);
    const result = (id: string) => path.join(outDir, `${id}.wav`);

    const ledger = kept.reopen({ readonly: true });
    try {
      const summary = await summarize(ledger, null);
      expect(summary.counts).toMatchObject({ done: 3 });
      expect(summary.results.files).toBe(3);
      expect(summary.dropped.jobs.map((job) => [job.id, job.state, job.output, job.inManifest])).toEqual([
        ['middle', 'done', result('middle'), false],
        ['outro', 'done', result('outro'), false],
      ]);
      const text = formatStatusText(summary, { color: false });
      expect(text).toContain('No longer in the manifest: 2 job(s)');
      expect(text).toMatch(new RegExp(`outro +done +${result('outro').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(text).toContain('Results: 3 file(s)');

      const page = path.join(dir, 'show.report.html');
      await writeReviewPage(ledger, page, { manifest, budgetMicro: null, generatedAt: new Date(0) });
      const rows = JSON.parse(/<script type="application\/json" id="review-rows">([\s\S]*?)<\/script>/.exec(await readFile(page, 'utf8'))![1]!) as unknown[][];
      expect(rows.map((row) => [row[0], row[12], row[13]])).toEqual([
        ['intro', 'show.out/intro.wav', 0],
        ['middle', 'show.out/middle.wav', 1],
        ['outro', 'show.out/outro.wav', 1],
      ]);
    } finally {
      await ledger.close();
    }

    const document = JSON.parse(await readFile(`${outDir}.run.json`, 'utf8')) as { counts: Record<string, number>; jobs: { id: string; output: string; in_manifest: boolean }[] };
    expect(document.counts).toMatchObject({ done: 3 });
    expect(document.jobs.map((job) => [job.id, job.output, job.in_manifest])).toEqual([
      ['intro', result('intro'), true],
      ['middle', result('middle'), false],
      ['outro', result('outro'), false],
    ]);
    const csv = (await readFile(`${outDir}.run.csv`, 'utf8')).trim().split('\n');
    expect(csv.map((line) => [line.split(',')[0], line.split(',').at(-1)])).toEqual([
      ['id', 'in_manifest'],
      ['intro', 'yes'],
      ['middle', 'no'],
      ['outro', 'no'],
    ]);
  });
});
