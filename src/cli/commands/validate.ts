import type { Argv } from 'yargs';
import { checkJobs } from '../../manifest/read.js';
import { ManifestError } from '../../manifest/errors.js';
import { openManifest, STDIN_MANIFEST } from '../../manifest/open.js';
import type { Manifest } from '../../manifest/open.js';
import { errorDocument } from '../error-document.js';
import { OUTSIDE_FILES_OPTION, withSharedOptions, type SharedArgs } from '../options.js';
import { logLine, writeJsonDocument, writeStdout } from '../output.js';

export function builder(y: Argv) {
  return withSharedOptions(y)
    .option('allow-outside-files', OUTSIDE_FILES_OPTION)
    .positional('manifest', { type: 'string', demandOption: true, describe: 'the YAML manifest' })
    .option('offline', { type: 'boolean', default: false, describe: 'check only what needs no service' });
}

type ValidateArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: ValidateArgs): Promise<number> {
  try {
    const stdin = args.manifest === STDIN_MANIFEST;
    const manifest = await openManifest(args.manifest, { allowOutsideFiles: args['allow-outside-files'], input: stdin ? process.stdin : undefined });
    const offline = args.offline || !hasCredentials(args);
    if (offline && !args.offline) {
      logLine('no token given: checked offline only (set MEDIABATCH_TOKEN, --token-file or --sim to check models and voices)');
    }
    const jobs = offline ? await checkOffline(manifest) : await checkOnline(args, manifest);
    const checked = offline ? 'offline checks only' : 'checked against the models catalogue';
    if (args.json) await writeJsonDocument({ valid: true, jobs, offline, problems: [] });
    else await writeStdout(`${manifest.displayPath}: ${jobs} job(s), valid (${checked}).`);
    return 0;
  } catch (error) {
    if (!(error instanceof ManifestError) || !args.json) throw error;
    const { error: failure, problems } = errorDocument(error);
    await writeJsonDocument({ valid: false, error: failure, problems: problems ?? [] });
    logLine(`${args.manifest}: ${error.total} problem(s)`);
    return error.exitCode;
  }
}

function hasCredentials(args: SharedArgs): boolean {
  return args.sim || args['token-file'] !== undefined || (process.env['MEDIABATCH_TOKEN'] ?? '').trim() !== '';
}

/** The runner's `check` without a service, called here so that an offline check never loads the runner. */
async function checkOffline(manifest: Manifest): Promise<number> {
  let jobs = 0;
  await checkJobs(manifest, undefined, () => (jobs += 1));
  return jobs;
}

/** The check against the catalogue, cached in the manifest's own ledger where it may be (lib/calls.ts). */
async function checkOnline(args: ValidateArgs, manifest: Manifest): Promise<number> {
  const [{ openService }, { checkWithCatalogue }] = await Promise.all([import('../session.js'), import('../../lib/calls.js')]);
  const service = await openService(args, process.env);
  try {
    return await checkWithCatalogue(manifest, { manifestArg: args.manifest, db: args.db }, service);
  } finally {
    await service.close();
  }
}
