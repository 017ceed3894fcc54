import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainInProcess } from '../helpers/main-in-process.js';
import { parseBudget } from '../../src/lib/options.js';
import { CLI, cliEnv, collect, hasStackTrace, runCli, type CliResult } from '../helpers/cli.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

/** A usage error: exit 2, the one line expected on stderr, no stack trace. */
function expectUsage(result: Pick<CliResult, 'code' | 'stderr'>, line: string): void {
  expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
  expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 2, stderr: `mediabatch: ${line}` });
}

describe('numeric flags: what was typed, checked by one parser each', () => {
  const workspace = useWorkspace();

  it('--budget refuses an empty value and words, quoting them; takes " 5 " and 5.50', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    // Through a process once: a refusal (exit 2, the line on stderr); a value taken into the document
    // through the same entry point in this process.
    const refused = await runCli(['estimate', manifest, '--sim', '--budget', 'abc']);
    const taken = await mainInProcess(['estimate', manifest, '--sim', '--json', '--budget', ' 5 ']);
    expectUsage(refused, '--budget: expected a number of USD ≥ 0 (such as 25 or 12.50), got "abc"');
    expect(refused.stdout).toBe('');
    expect(taken.code, taken.stderr).toBe(0);
    expect((JSON.parse(taken.stdout) as { budget: number }).budget).toBe(5);
    // The other values through the same entry point in this process.
    expectUsage(
      await mainInProcess(['estimate', manifest, '--sim', '--budget', '']),
      '--budget: expected a number of USD ≥ 0 (such as 25 or 12.50), got an empty value',
    );
    expectUsage(
      await mainInProcess(['estimate', manifest, '--sim', '--budget', '0x10']),
      '--budget: expected a number of USD ≥ 0 (such as 25 or 12.50), got "0x10"',
    );
    expect(parseBudget('5.50')).toBe(5.5);
  });

  it('--concurrency and --poll-ms quote what was given', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    // The CLI's entry point in this process: the spawn above (--budget) shows a refusal's exit and stderr.
    const lots = await mainInProcess(['run', manifest, '--sim', '--concurrency', 'lots']);
    expectUsage(lots, '--concurrency: expected a whole number from 1 to 64, got "lots"');
    expect(lots.stdout).toBe('');
    expectUsage(
      await mainInProcess(['run', manifest, '--sim', '--concurrency', '']),
      '--concurrency: expected a whole number from 1 to 64, got an empty value',
    );
    expectUsage(
      await mainInProcess(['estimate', manifest, '--sim', '--concurrency', '0']),
      '--concurrency: expected a whole number from 1 to 64, got "0"',
    );
    expectUsage(
      await mainInProcess(['run', manifest, '--sim', '--poll-ms', '1.5e3']),
      '--poll-ms: expected a whole number of milliseconds from 10 to 600000, got "1.5e3"',
    );
    expectUsage(
      await mainInProcess(['run', manifest, '--sim', '--concurrency', '2', '--concurrency', '3']),
      '--concurrency: given 2 times ("2", "3"); give it once',
    );
  });
});

describe('sim options', () => {
  it.each([
    [['--latency', '-5'], '--latency: expected a whole number of milliseconds from 0 to 600000, got "-5"'],
    [['--latency', 'slow'], '--latency: expected a whole number of milliseconds from 0 to 600000, got "slow"'],
    [['--job-error-rate', '2'], '--job-error-rate: expected a share from 0 to 1 (such as 0.1), got "2"'],
    [['--balance', '-1'], '--balance: expected a number of USD ≥ 0 (such as 25 or 12.50), got "-1"'],
    [['--seed', '1.5'], '--seed: expected a whole number from 0 to 4294967295, got "1.5"'],
    [['--port', '99999'], '--port: expected a whole number from 0 to 65535, got "99999"'],
    [['--port', ''], '--port: expected a whole number from 0 to 65535, got an empty value'],
  ])('sim %j is a usage error naming the option, the range and what was given', async (args, line) => {
    expectUsage(await mainInProcess(['sim', ...args]), line);
  });

  it('a refused option through a process: exit 2, the line on stderr, nothing on stdout, no simulator', async () => {
    const result = await runCli(['sim', '--port', ''], { timeoutMs: 15_000 });
    expectUsage(result, '--port: expected a whole number from 0 to 65535, got an empty value');
    expect(result.stdout).toBe('');
  });

  it('a port in use: exit 4, naming the port and what to do', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      // The CLI's entry point in this process: the test above shows a refused sim option's process exit.
      const result = await mainInProcess(['sim', '--port', String(port)]);
      expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
      expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({
        code: 4,
        stderr: `mediabatch: --port ${port}: another program already listens on 127.0.0.1:${port}; pick another port, or --port 0 for a free one`,
      });
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});

describe('the folder a command starts in', () => {
  const workspace = useWorkspace();

  it('a current folder deleted under the shell: exit 4 and what to do, no stack trace', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    const gone = path.join(workspace.dir, 'gone');
    mkdirSync(gone);
    // The shell enters the folder, removes it, then starts the CLI there: as a user's shell would.
    const child = spawn('/bin/sh', ['-c', 'cd "$1" && rmdir "$1" && exec "$2" "$3" estimate "$4" --sim', 'sh', gone, process.execPath, CLI, manifest], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = await collect(child, 15_000);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({
      code: 4,
      stderr: 'mediabatch: the current folder no longer exists (it was deleted or moved while the shell was in it): cd into an existing folder and run the command again',
    });
  });
});
