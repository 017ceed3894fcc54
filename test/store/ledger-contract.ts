/**
 * The Ledger contract: every promise the runner, the reports and `status` rely on, checked
 * against any implementation of src/store/ledger.ts through that interface alone. An
 * implementation passes a factory; see docs/ledger.md.
 *
 *   ledgerContract('PostgreSQL', { create: …, reopen: …, cleanup: … });
 *
 * Nothing here knows SQLite: what only one implementation can show (files, pragmas, the lock)
 * is tested beside it.
 */
import { afterEach, describe } from 'vitest';
import type { Ledger } from '../../src/store/index.js';
import { budgetContract } from './contract/budget.js';
import { storeContract } from './contract/caches-and-lock.js';
import { graphContract } from './contract/graph.js';
import { jobsContract } from './contract/jobs-and-events.js';
import { selectionContract } from './contract/selection.js';
import { transitionsContract } from './contract/transitions.js';
import { webhooksContract } from './contract/webhooks.js';

export interface LedgerFactory {
  /** A new, empty ledger, open for writing as a run opens it; `nowMs` is its clock when given. */
  create(options?: { nowMs?: () => number }): Promise<Ledger>;
  /**
   * Another handle on the store that `ledger` uses, as another process would open it. `ledger`
   * is left exactly as it is: not closed, nothing more asked of it. With `readonly`, a handle
   * as `status` opens it.
   */
  reopen(ledger: Ledger, options?: { readonly?: boolean; nowMs?: () => number }): Promise<Ledger>;
  /** Called after each test, once every handle it opened is closed. */
  cleanup?(): Promise<void> | void;
}

/** What each part of the suite gets: the factory, with every handle closed after each test. */
export type Ledgers = Pick<LedgerFactory, 'create' | 'reopen'>;

export function ledgerContract(name: string, factory: LedgerFactory): void {
  describe(`Ledger contract: ${name}`, () => {
    const open: Ledger[] = [];
    afterEach(async () => {
      for (const ledger of open.splice(0)) await ledger.close().catch(() => undefined);
      await factory.cleanup?.();
    });
    const track = async (opening: Promise<Ledger>): Promise<Ledger> => {
      const ledger = await opening;
      open.push(ledger);
      return ledger;
    };
    const ledgers: Ledgers = {
      create: (options) => track(factory.create(options)),
      reopen: (ledger, options) => track(factory.reopen(ledger, options)),
    };
    transitionsContract(ledgers);
    budgetContract(ledgers);
    jobsContract(ledgers);
    selectionContract(ledgers);
    storeContract(ledgers);
    webhooksContract(ledgers);
    graphContract(ledgers);
  });
}
