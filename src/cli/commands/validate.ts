import os from 'node:os';
import type { CommandModule } from 'yargs';
import { ManifestError } from '../../manifest/errors.js';
import { openManifest, STDIN_MANIFEST } from '../../manifest/open.js';
import type { Manifest } from '../../manifest/types.js';
import { check } from '../../runner/index.js';
import type { CommandResult } from '../main.js';
import { errorDocument } from '../error-document.js';
import { openLedgerFor, tryRunLock } from '../ledger.js';
import { manifestPaths, withManifestFileOptions, withSharedOptions, type ManifestFileArgs, type SharedArgs } from '../options.js';
import { logLine, writeJsonDocument, writeStdout } from '../output.js';
import { openService } from '../service.js';

function hasCredentials(args: SharedArgs): boolean {
  return args.sim || args['token-file'] !== undefined || (process.env['MEDIABATCH_TOKEN'] ?? '').trim() !== '';
}

interface ValidateArgs extends SharedArgs, ManifestFileArgs {
  manifest: string;
  offline: boolean;
}

export function validateCommand(result: CommandResult): CommandModule<object, ValidateArgs> {
  return {
    command: 'validate <manifest>',
    describe: 'check every job of a manifest and report every problem at once; sends no generation request',
    builder: (y) =>
      withManifestFileOptions(withSharedOptions(y))
        .positional('manifest', { type: 'string', demandOption: true, describe: 'the YAML manifest' })
        .option('offline', { type: 'boolean', default: false, describe: 'check only what needs no service' }),
    handler: async (args) => {
      try {
        const stdin = args.manifest === STDIN_MANIFEST;
        const manifest = await openManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'], input: stdin ? process.stdin : undefined });
        const offline = args.offline || !hasCredentials(args);
        if (offline && !args.offline) {
          logLine('no token given: checked offline only (set MEDIABATCH_TOKEN, --token-file or --sim to check models and voices)');
        }
        const { jobs } = offline ? await check({ manifest }) : await checkOnline(args, manifest);
        const checked = offline ? 'offline checks only' : 'checked against the models catalogue';
        if (args.json) await writeJsonDocument({ valid: true, jobs, offline, problems: [] });
        else await writeStdout(`${manifest.displayPath}: ${jobs} job(s), valid (${checked}).`);
        result.exitCode = 0;
      } catch (error) {
        if (!(error instanceof ManifestError) || !args.json) throw error;
        const { error: failure, problems } = errorDocument(error);
        await writeJsonDocument({ valid: false, error: failure, problems: problems ?? [] });
        logLine(`${args.manifest}: ${error.total} problem(s)`);
        result.exitCode = error.exitCode;
      }
    },
  };
}

/**
 * The check against the catalogue, cached in the manifest's own ledger. Not when jobs come from
 * stdin without --db (no ledger is theirs), nor while a run holds the ledger (nothing else may
 * write it): the catalogue is then fetched and not kept.
 */
async function checkOnline(args: ValidateArgs, manifest: Manifest): Promise<{ jobs: number }> {
  const service = await openService(args, process.env);
  try {
    const ledger = args.manifest === STDIN_MANIFEST && args.db === undefined ? undefined : await openLedgerFor(manifestPaths(args.manifest, args.db).db, 'read-write');
    try {
      const busy = ledger && (await tryRunLock(ledger, { pid: process.pid, host: os.hostname(), command: 'validate' }));
      return await check({ manifest, service: { client: service.client, baseUrl: service.baseUrl, ledger: busy === undefined ? ledger : undefined } });
    } finally {
      await ledger?.close();
    }
  } finally {
    await service.close();
  }
}
