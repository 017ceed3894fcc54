import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasStackTrace, runCli, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';
import { startProxy } from '../security/servers.js';

interface ErrorDocument {
  schema_version: number;
  error: { code: string; message: string; exit_code: number };
  problems?: unknown[];
}

type Result = Pick<CliResult, 'code' | 'stdout' | 'stderr'>;

/**
 * Exactly one JSON document on stdout (JSON.parse refuses two), carrying the error and the exit
 * code; the person at the terminal still reads the message on stderr.
 */
function errorDocument(
  result: Result,
  code: string,
  exitCode: number,
  stderr = (doc: ErrorDocument) => doc.error.message,
): ErrorDocument {
  expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
  expect(result.code, result.stderr).toBe(exitCode);
  const doc = JSON.parse(result.stdout) as ErrorDocument;
  expect(doc).toMatchObject({ schema_version: 1, error: { code, exit_code: exitCode } });
  expect(doc.error.message).not.toMatch(/\n\s+at /);
  expect(result.stderr).toContain(stderr(doc));
  return doc;
}

describe('--json: one document on stdout, failures included', () => {
  const workspace = useWorkspace();

  async function badManifest(): Promise<string> {
    const file = path.join(workspace.dir, 'bad.yaml');
    await writeFile(file, 'version: 1\njobs:\n  - { id: a, type: txt2audio, txet: "typo" }\n');
    return file;
  }

  it('an invalid manifest (exit 2) lists its problems', async () => {
    const file = await badManifest();
    const estimate = errorDocument(await mainInProcess(['estimate', file, '--json']), 'E_MANIFEST', 2);
    expect(estimate.problems?.length).toBeGreaterThan(0);
    // validate --json says only how many problems on stderr: the document lists them.
    const validated = await mainInProcess(['validate', file, '--offline', '--json']);
    const validate = errorDocument(validated, 'E_MANIFEST', 2, (doc) => `${doc.problems?.length} problem(s)`);
    // validate's own keys stay, next to the error.
    expect(validate).toMatchObject({ valid: false });
    expect(validate.problems?.length).toBeGreaterThan(0);
  });

  // The one spawn: the document is all that reaches the real stdout of a process that exits 4.
  it('no token (exit 4)', async () => {
    errorDocument(await runCli(['models', '--json']), 'E_TOKEN', 4);
  });

  it('a run over its budget (exit 3)', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 3 });
    errorDocument(await mainInProcess(['run', manifest, '--sim', '--budget', '0.000001', '--json']), 'E_BUDGET', 3);
  });

  it('usage errors from the command line: an unknown flag, a missing argument', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 1 });
    const unknown = errorDocument(await mainInProcess(['status', manifest, '--json', '--frobnicate']), 'E_USAGE', 2);
    expect(unknown.error.message).toContain('frobnicate');
    errorDocument(await mainInProcess(['run', '--json']), 'E_USAGE', 2);
  });

  it('a run stopped by a fatal answer mid-run: its summary and the error in one document', async () => {
    const sim = await workspace.startSim();
    const proxy = await startProxy(sim.url, { submit: () => ({ status: 401, body: JSON.stringify({ message: 'Unauthenticated.' }) }) });
    try {
      const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
      const args = ['run', manifest, '--json', '--base-url', proxy.url, '--plan', 'unlimited'];
      const result = await mainInProcess(args, { MEDIABATCH_TOKEN: sim.token });
      const doc = errorDocument(result, 'E_API_AUTH', 4) as ErrorDocument & { counts: Record<string, number> };
      expect(doc.counts['pending']).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it('successful documents say schema_version 1', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 1 });
    // In turn: the CLI in this process takes its stdout while it runs.
    const results: Result[] = [];
    const commands = [
      ['validate', manifest, '--offline'],
      ['models', '--sim'],
      ['estimate', manifest, '--sim'],
      ['run', manifest, '--sim'],
      ['status', manifest],
    ];
    for (const args of commands) {
      results.push(await mainInProcess([...args, '--json']));
    }
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ schema_version: 1 });
    }
    expect(results).toHaveLength(5);
  });
});
