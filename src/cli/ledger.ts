import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { openLedger, type Ledger } from '../store/index.js';

/** Opens (creating if needed) the ledger beside the manifest, making its folder first. */
export function openLedgerFor(file: string, options: { readonly?: boolean } = {}): Ledger {
  if (!options.readonly) mkdirSync(path.dirname(file), { recursive: true });
  return openLedger(file, options);
}

const MANIFEST_KEY = 'manifest_path';

/**
 * A ledger belongs to the manifest it was made for: its spend, its request ids and its results
 * folder are that manifest's. Used for another manifest (`a.yml` beside `a.yaml` share a
 * default ledger name; `--db` pointing at another's ledger), a run would report, and resume,
 * jobs that are not its own. Refused while the manifest the ledger was made for still exists;
 * when that file is gone (a folder moved or renamed), the ledger follows its manifest.
 */
export function claimLedger(ledger: Ledger, manifestPath: string): void {
  const current = realPath(manifestPath);
  const recorded = ledger.getMeta(MANIFEST_KEY);
  if (recorded === current) return;
  if (recorded !== undefined && existsSync(recorded) && realPath(recorded) !== current) {
    throw new ConfigError(
      `the ledger ${ledger.path} belongs to the manifest ${recorded}, not to ${current}: give this manifest a ledger of its own with --db PATH (its results folder and reports take that ledger's name), or run ${recorded}. Nothing was sent.`,
      'E_LEDGER_OTHER_MANIFEST',
    );
  }
  if (ledger.readonly) return;
  ledger.setMeta(MANIFEST_KEY, current);
  if (recorded !== undefined) ledger.recordEvent(null, 'manifest_moved', { from: recorded, to: current });
}

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
