import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, collect, hasStackTrace, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';
import { writeTtsManifest } from '../helpers/manifests.js';
import { useWorkspace } from '../helpers/workspace.js';

/** The uid and gid of `nobody` on Linux. */
const NOBODY = 65_534;

/**
 * Runs the built CLI as a user file permissions apply to. Root (as in many CI containers) writes
 * through a 0444 file and a 0555 folder, so a test of those refusals would prove nothing there:
 * as root, the CLI runs as `nobody` instead (root may switch users), and the folders it must
 * reach are opened to everyone.
 */
function runUnprivileged(args: string[], cwd: string): Promise<CliResult> {
  const asRoot = process.getuid?.() === 0;
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  return collect(child);
}

describe('a ledger the user may not write', () => {
  const workspace = useWorkspace();

  it('a read-only ledger file is named as read-only, not as an unwritable folder (exit 4)', async () => {
    const manifest = await writeTtsManifest(workspace.dir, { jobs: 2 });
    // The ledger made by a run of the CLI's main in this process; the refusal below is another user's process.
    const first = await mainInProcess(['run', manifest, '--sim']);
    expect(first.code, first.stderr).toBe(0);
    const db = path.join(workspace.dir, 'batch.mediabatch.db');
    // The folder is writable by anyone: only the file itself is read-only.
    chmodSync(workspace.dir, 0o777);
    chmodSync(db, 0o444);

    const second = await runUnprivileged(['run', manifest, '--sim'], workspace.dir);
    expect(hasStackTrace(second.stderr), second.stderr).toBe(false);
    expect({ code: second.code, stderr: second.stderr.trim() }).toEqual({
      code: 4,
      stderr: `mediabatch: ledger ${db} is read-only: make it writable (chmod u+w ${db}), or pass --db PATH to use another ledger`,
    });

    // The ledger writable again, but a read-only -wal beside it (left by a copy, or an older
    // mediabatch's failed attempt): that file is the one named.
    chmodSync(db, 0o666);
    writeFileSync(`${db}-wal`, '');
    chmodSync(`${db}-wal`, 0o444);
    const third = await runUnprivileged(['run', manifest, '--sim'], workspace.dir);
    expect({ code: third.code, stderr: third.stderr.trim() }).toEqual({
      code: 4,
      stderr: `mediabatch: ledger ${db}-wal is read-only: make it writable (chmod u+w ${db}-wal), or pass --db PATH to use another ledger`,
    });
  });

  it('a folder where the ledger cannot be made is named as not writable (exit 4)', async () => {
    const folder = path.join(workspace.dir, 'locked');
    mkdirSync(folder);
    chmodSync(workspace.dir, 0o755);
    const manifest = path.join(folder, 'batch.yaml');
    copyFileSync(await writeTtsManifest(workspace.dir, { jobs: 1 }), manifest);
    chmodSync(manifest, 0o644);
    chmodSync(folder, 0o555);

    const result = await runUnprivileged(['run', manifest, '--sim'], workspace.dir);
    expect(hasStackTrace(result.stderr), result.stderr).toBe(false);
    const db = path.join(folder, 'batch.mediabatch.db');
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({
      code: 4,
      stderr: `mediabatch: cannot create or write the ledger ${db}: the folder ${folder} is not writable (SQLite keeps the ledger's -wal and -shm files beside it); fix the folder's permissions, or pass --db PATH in a writable folder`,
    });
    chmodSync(folder, 0o755);
  });
});
