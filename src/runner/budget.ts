import { budgetFit, type MicroUsd } from '../money.js';
import type { Ledger, SendSelection } from '../store/index.js';
import type { BudgetFitResult } from './plan.js';
import { jobWindows } from './windows.js';

/**
 * What of the jobs `send` selects fits under the budget on top of what is spent, in manifest
 * order (money.ts's rule, the one the ledger's reservation applies too): the prices stream from
 * the ledger, so this costs a pass over the jobs but never holds them.
 */
export async function fitInOrder(ledger: Ledger, send: SendSelection, spentMicro: MicroUsd, budgetMicro: MicroUsd): Promise<BudgetFitResult> {
  const fit = budgetFit(spentMicro, budgetMicro);
  const byType: BudgetFitResult['byType'] = {};
  let through: BudgetFitResult['through'];
  for await (const row of jobWindows(ledger, { scope: 'manifest', send })) {
    if (row.priceMicro === null) throw new Error(`bug in mediabatch: job "${row.id}" is to be sent but has no price`);
    if (!fit.take(row.priceMicro)) break;
    through = { index: row.manifestIndex, id: row.id };
    byType[row.type] = (byType[row.type] ?? 0) + 1;
  }
  return { count: fit.count, micro: fit.micro, byType, through };
}
