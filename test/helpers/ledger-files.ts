import { rmSync } from 'node:fs';

/** Deletes a ledger as a person would: the file and its write-ahead log and shared-memory files. */
export function deleteLedgerFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}
