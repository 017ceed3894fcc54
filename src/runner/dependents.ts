import type { Model } from '../api/types.js';
import type { SendableJob } from '../jobs/index.js';
import { microToUsd } from '../money.js';
import type { GraphLedger, JobRow, KeyPrice, ListingLedger } from '../store/index.js';
import type { RunEvent } from './context.js';
import { jobFromRow } from './ingest.js';
import { materialise } from './inputs.js';

export interface DependentDeps {
  ledger: Pick<ListingLedger, 'getJob'> & Pick<GraphLedger, 'priceForSend'>;
  outDir: string;
  models: readonly Model[] | undefined;
  /** The normal price path for one job (runner/prepare.ts jobPricer). */
  price: (job: SendableJob) => Promise<KeyPrice>;
  emit: (event: RunEvent) => void;
}

/**
 * The job a row sends: as recorded, or for a dependent, with its inputs put in place from its
 * upstreams' results, and when it was priced at a bound, priced for real before its reservation,
 * so the budget counts what it costs.
 */
export async function jobToSend(
  deps: DependentDeps,
  row: JobRow,
): Promise<{ job: SendableJob } | { blocked: string }> {
  const job = jobFromRow(row);
  if (row.inputs === null) return { job };
  const upstreamOf = (id: string) => deps.ledger.getJob(id);
  const put = await materialise(job, row.inputs, { upstreamOf, outDir: deps.outDir, models: deps.models });
  if ('blocked' in put || !row.priceBound) return put;
  const price = await deps.price(put.job);
  await deps.ledger.priceForSend(row.id, price);
  deps.emit({ kind: 'repriced', id: row.id, boundUsd: microToUsd(row.priceMicro ?? 0), priceUsd: microToUsd(price.priceMicro) });
  return put;
}
