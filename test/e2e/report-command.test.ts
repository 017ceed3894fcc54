import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli, tempDir } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';

/** `mediabatch report`: the page from the ledger alone, where it goes, and `--open`. */
describe('mediabatch report', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let manifest: string;
  let page: string;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('mediabatch-report-'));
    manifest = await writeTtsManifest(dir, { jobs: 3, budget: 1 });
    const run = await mainInProcess(['run', manifest, '--sim']);
    expect(run.code, run.stderr).toBe(0);
    page = path.join(dir, 'batch.report.html');
  }, 60_000);

  afterAll(async () => {
    await cleanup();
  });

  it('run writes the page when it ends; report writes it again from the ledger, with no server or token', async () => {
    const byRun = readFileSync(page, 'utf8');
    expect(byRun).toContain('<title>batch.yaml · mediabatch review</title>');
    await rm(page);
    const report = await mainInProcess(['report', manifest, '--base-url', 'http://127.0.0.1:9']);
    expect(report).toMatchObject({ code: 0, stderr: '', stdout: `wrote ${page} (3 jobs)\n` });
    const html = readFileSync(page, 'utf8');
    expect(html.match(/"line-0000\d"/g)).toEqual(['"line-00000"', '"line-00001"', '"line-00002"']);
    expect(html).toContain('data-filter-state="done" data-count="3"');
    // The same jobs and totals as the run's page: only the time it was written differs.
    const written = /<time datetime="[^"]+">[^<]+<\/time>/g;
    expect(html.replace(written, '')).toBe(byRun.replace(written, ''));
  });

  it('clears what a report killed mid-write left beside the page (a dead pid), never a live writer\'s', async () => {
    // Above the kernel's largest pid (2^22): no process can have it. This test's own is alive, and
    // another process than the report's: a spawn (in this process, the page would be the report's own).
    const dead = `${page}.4194305.partial`;
    const live = `${page}.${process.pid}.part`;
    await writeFile(dead, '<html>half a page');
    await writeFile(live, '<html>being written');
    const report = await runCli(['report', manifest]);
    expect(report.code, report.stderr).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    await rm(live);
  });

  it('with --db, names the page after that ledger, as the other reports are', async () => {
    const db = path.join(dir, 'team.mediabatch.db');
    await copyFile(path.join(dir, 'batch.mediabatch.db'), db);
    const json = await mainInProcess(['report', manifest, '--db', db, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ schema_version: 1, page: path.join(dir, 'team.report.html'), jobs: 3, opened: false });
    expect(existsSync(path.join(dir, 'team.report.html'))).toBe(true);
  });

  // A spawn: the opener is found on the real PATH of a process that exits without waiting for it.
  it('--open hands the page to the system opener, detached', async () => {
    const bin = path.join(dir, 'bin-ok');
    const called = path.join(dir, 'opener-called-with');
    await fakeOpener(bin, `printf '%s' "$1" > '${called}'`);
    const report = await runCli(['report', manifest, '--open'], { env: { PATH: `${bin}:${process.env['PATH']}` } });
    expect(report).toMatchObject({ code: 0, stderr: '', stdout: `wrote ${page} (3 jobs)\n` });
    expect(readFileSync(called, 'utf8')).toBe(page);
  });

  it('--open that cannot open says so and where the page is, and still exits 0: the page was written', async () => {
    const bin = path.join(dir, 'bin-broken');
    await fakeOpener(bin, 'echo "no display" >&2; exit 3');
    await rm(page);
    const report = await mainInProcess(['report', manifest, '--open'], { PATH: `${bin}:${process.env['PATH']}` });
    expect(report.code).toBe(0);
    expect(report.stderr).toMatch(new RegExp(`^mediabatch: could not open the page \\((xdg-open|open) ended with exit code 3\\); open it in a browser: ${escapeRegExp(page)}\\n$`));
    expect(existsSync(page)).toBe(true);

    const missing = await mainInProcess(['report', manifest, '--open'], { PATH: path.join(dir, 'no-such-bin') });
    expect(missing.code).toBe(0);
    expect(missing.stderr).toMatch(/^mediabatch: could not open the page \((xdg-open|open): not found\); open it in a browser: /);
  });

  it('refuses a manifest that was never run (exit 2), without a stack trace or a ledger left behind', async () => {
    const fresh = await writeTtsManifest(dir, { jobs: 1 }, 'fresh.yaml');
    const report = await mainInProcess(['report', fresh]);
    expect(report.code).toBe(2);
    expect(report.stderr).toBe(
      `mediabatch: no ledger at ${path.join(dir, 'fresh.mediabatch.db')}: nothing has been run for ${fresh} yet (or pass --db PATH)\n`,
    );
    expect(hasStackTrace(report.stderr)).toBe(false);
    expect(existsSync(path.join(dir, 'fresh.mediabatch.db'))).toBe(false);
    expect(existsSync(path.join(dir, 'fresh.report.html'))).toBe(false);
  });
});

/** An `xdg-open` (and `open`, for macOS) of the test's own: a real program at the front of PATH. */
async function fakeOpener(bin: string, body: string): Promise<void> {
  await mkdir(bin, { recursive: true });
  for (const name of ['xdg-open', 'open']) {
    const file = path.join(bin, name);
    await writeFile(file, `#!/bin/sh\n${body}\n`);
    await chmod(file, 0o755);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
