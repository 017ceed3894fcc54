import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { openLedger, type Ledger } from '../store/index.js';

/** Opens (creating if needed) the ledger beside the manifest, making its folder first. */
export function openLedgerFor(file: string, options: { readonly?: boolean } = {}): Ledger {
  if (!options.readonly) mkdirSync(path.dirname(file), { recursive: true });
  return openLedger(file, options);
}
