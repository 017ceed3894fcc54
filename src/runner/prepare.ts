import { withRetries } from '../api/retry.js';
import type { Model, ServiceRequest } from '../api/types.js';
import { catalogueTypesOf, JOB_TYPES, kindOf, type SendableJob } from '../jobs/index.js';
import type { Manifest } from '../manifest/open.js';
import { formatUsd, usdToMicro } from '../money.js';
import { priceGroups, type PriceGroup, type PricingResult } from '../pricing/price-jobs.js';
import { groupKeyOf } from '../pricing/keys.js';
import type { PriceCache } from '../pricing/types.js';
import type { ChangedJob, GraphLedger, IngestLedger, KeyPrice, ListingLedger } from '../store/index.js';
import type { PlanLedger, SendSelection } from '../store/index.js';
import { createRunProgress, type PricingProgress, type RetryPolicy } from './context.js';
import type { RunDeps, RunProgress } from './context.js';
import { checkInputs, settleBlocked } from './graph.js';
import { ingestManifest, type IngestResult } from './ingest.js';
import { idempotentRetries } from './run-errors.js';
import { checkSelection } from './selection.js';

/** The catalogue changes rarely (docs/service.md: cache it minutes to a day). */
export const CATALOGUE_MAX_AGE_MS = 60 * 60_000;
/** Prices may change; a day-old quote is still what a person means by "the estimate". */
export const PRICE_MAX_AGE_MS = 24 * 60 * 60_000;

/** What pricing, the catalogue and the balance use: a run's dependencies, or an estimate's. */
export type ServiceDeps = Pick<RunDeps, 'client' | 'pace' | 'stop' | 'emit'> & {
  ledger: PlanLedger;
  baseUrl: string;
  retry: RetryPolicy;
  progress?: RunProgress | undefined;
};

/** Jobs already sent whose inputs are other results now: said once each, as many as ingest problems. */
const CHANGED_INPUTS_SHOWN = 200;

/**
 * What an estimate and a run do alike before anything is sent: check the manifest's jobs against
 * the catalogue and record them, check the graph of their references and the selection, price
 * what `send` selects. A run (`forRun`) is warned of jobs changed after they were sent (their
 * inputs too), settles which jobs wait on an input that will not be done, and prices on today's
 * prices. `graph`: some job takes another's result.
 */
export async function prepareSend(
  manifest: Manifest,
  deps: ServiceDeps & { ledger: IngestLedger & ListingLedger & GraphLedger },
  send: SendSelection,
  forRun: boolean,
): Promise<{ ingest: IngestResult; pricing: PricingResult; models: Model[]; graph: boolean }> {
  const { emit, progress } = deps;
  const models = await loadCatalogue(deps);
  const changed = (change: Pick<ChangedJob, 'id' | 'state'>): void =>
    emit({
      kind: 'warning',
      message: `job "${change.id}" changed after it was submitted: it keeps its earlier result (${change.state}). Give it a new id to generate it again.`,
    });
  const ingest = await ingestManifest({
    manifest,
    ledger: deps.ledger,
    models,
    onProgress: (rows) => {
      if (progress !== undefined) progress.pricing.jobsRead = rows;
    },
    onChanged: forRun ? changed : undefined,
  });
  const graph = await checkInputs(deps.ledger);
  await checkSelection(deps.ledger, send);
  if (forRun && graph) {
    const inputsChanged = await deps.ledger.inputsChanged(CHANGED_INPUTS_SHOWN);
    for (const change of new Map(inputsChanged.map((change) => [change.id, change])).values()) changed(change);
    await settleBlocked(deps.ledger, send, emit);
  }
  // Only what may be sent needs a price (a run's, a fresh one): a finished job costs nothing more.
  const pricing = await priceLedger(send, deps, { confirmCached: forRun });
  for (const change of pricing.changes) {
    const [cached, current] = [change.cachedUsd, change.currentUsd].map((usd) => formatUsd(usdToMicro(usd, 'up')));
    emit({
      kind: 'warning',
      message: `the service's price changed since it was cached (${change.model}: ${cached} → ${current} for one job): its group was priced again before anything was sent`,
    });
  }
  return { ingest, pricing, models, graph };
}

export type CatalogueCache = Pick<PlanLedger, 'getCatalogue' | 'putCatalogue'>;

/** The models catalogue, from the ledger's cache when fresh, else every page of the service (cached in the ledger, if one is given). */
export async function loadCatalogue(
  deps: Pick<ServiceDeps, 'client' | 'baseUrl'> & {
    ledger?: CatalogueCache | undefined;
    stop?: AbortSignal | undefined;
  },
): Promise<Model[]> {
  const cached = await deps.ledger?.getCatalogue(deps.baseUrl, CATALOGUE_MAX_AGE_MS);
  if (Array.isArray(cached)) {
    // The cache is per base URL, not per token (no trace of the token may reach the ledger),
    // so the token is still proven with one call that is never rate limited: a wrong token
    // must fail here as it would without the cache.
    await deps.client.balance({ signal: deps.stop });
    return cached as Model[];
  }
  // The first call of a command, on a fresh connection: a failure here is the address or the
  // network, said at once (exit 4) rather than after a minute of retries.
  const models = await deps.client.listModels({ types: catalogueTypesOf(JOB_TYPES), signal: deps.stop });
  await deps.ledger?.putCatalogue(deps.baseUrl, models);
  return models;
}

/**
 * The account's balance, retried like any read: it comes after the ingest and the pricing, which
 * take minutes for a million jobs, and the pooled connection it goes out on may have been closed
 * by the server meanwhile ("other side closed"). The first call of a command is not retried: a
 * failure there is the address or the network, said at once.
 */
export async function readBalanceUsd(deps: Pick<ServiceDeps, 'client' | 'retry' | 'emit'> & { stop?: AbortSignal | undefined }): Promise<number> {
  const retries = idempotentRetries(deps, 'balance call');
  return (await withRetries(() => deps.client.balance({ signal: deps.stop }), retries)).balanceUsd;
}

/**
 * Prices every job `send` selects, as the ledger groups them (one call per price group, or a few
 * probes per group priced by length, whatever the number of jobs), and records each job's price
 * in the ledger. Price calls are idempotent, so they are retried freely and paced as their own
 * class; the cache in the ledger makes a second estimate free. A run passes `confirmCached`: the
 * budget must be judged on today's prices, at one call per cached group.
 */
export async function priceLedger(
  send: SendSelection,
  deps: ServiceDeps,
  options: { confirmCached?: boolean } = {},
): Promise<PricingResult> {
  const { quote, cache, calls } = await ledgerPricing(deps);
  const groups: PriceGroup[] = (await deps.ledger.priceGroups(send)).map((row) => ({
    key: row.groupKey,
    type: row.type,
    sample: { id: row.groupKey, type: row.type, params: JSON.parse(row.paramsJson) as Record<string, unknown>, media: {} },
    jobs: row.jobs,
    lengths: row.lengths,
  }));
  let pricing: PricingResult;
  try {
    pricing = await priceGroups(groups, {
      quote,
      cache,
      confirmCached: options.confirmCached,
      onCallPlanned: () => void (calls.planned += 1),
    });
  } finally {
    await cache.saved();
  }
  await deps.ledger.applyPrices(pricing.prices, send);
  return pricing;
}

/**
 * One job's price as it is about to be sent, by the same path as every price (the cache, else one
 * call): a dependent priced at a bound until its inputs existed. The cache is read once per run.
 */
export async function jobPricer(deps: ServiceDeps): Promise<(job: SendableJob) => Promise<KeyPrice>> {
  const { quote, cache } = await ledgerPricing(deps);
  return async (job) => {
    const pricing = kindOf(job.type).pricing;
    const chars = pricing.by === 'per-length' ? pricing.lengthOf(job) : 0;
    const group: PriceGroup = {
      key: groupKeyOf(job),
      type: job.type,
      sample: { ...job, media: {} },
      jobs: 1,
      lengths: pricing.by === 'per-length' ? [{ chars, jobs: 1 }] : [],
    };
    const found = (await priceGroups([group], { quote, cache }).finally(() => cache.saved())).prices[0];
    if (found === undefined) throw new Error(`bug in mediabatch: no price found for job "${job.id}"`);
    return found;
  };
}

/** Price calls paced as their own class and retried (they are idempotent), over the ledger's cache. */
async function ledgerPricing(deps: ServiceDeps) {
  const calls = (deps.progress ?? createRunProgress()).pricing;
  const quote = (request: ServiceRequest): Promise<number> =>
    withRetries(
      async () => {
        await counted(calls, 'waitingForPace', deps.pace.take('price', deps.stop));
        const answer = await counted(calls, 'waitingForAnswer', deps.client.price(request, { signal: deps.stop }));
        deps.pace.observe('price', answer.rateLimit);
        calls.answered += 1;
        return answer.value.priceUsd;
      },
      idempotentRetries(deps, 'price call', 'price'),
    );
  return { quote, cache: await ledgerPriceCache(deps.ledger), calls };
}

async function counted<T>(calls: PricingProgress, counter: 'waitingForPace' | 'waitingForAnswer', work: Promise<T>): Promise<T> {
  calls[counter] += 1;
  try {
    return await work;
  } finally {
    calls[counter] -= 1;
  }
}

/**
 * Pricing's cache over the ledger's: the fresh prices read once up front, and what pricing
 * puts or forgets applied to that copy at once and to the ledger in the order it was asked.
 * `saved()` settles when the ledger has all of it (and rejects if it could not be written).
 */
async function ledgerPriceCache(
  ledger: Pick<PlanLedger, 'getPrices' | 'putPrices' | 'forgetPrices'>,
): Promise<PriceCache & { saved(): Promise<void> }> {
  const prices = await ledger.getPrices(PRICE_MAX_AGE_MS);
  let writes = Promise.resolve();
  let failure: { error: unknown } | undefined;
  const then = (write: () => Promise<void>): void => {
    // Caught at once: a failed write must not be an unhandled rejection while pricing goes on.
    writes = writes.then(write).catch((error: unknown) => void (failure ??= { error }));
  };
  return {
    get: (key) => prices.get(key),
    put: (rows) => {
      for (const row of rows) prices.set(row.key, { priceUsd: row.priceUsd, source: row.source, ageMs: 0 });
      then(() => ledger.putPrices(rows));
    },
    forget: (keys) => {
      for (const key of keys) prices.delete(key);
      then(() => ledger.forgetPrices(keys));
    },
    saved: async () => {
      await writes;
      if (failure !== undefined) throw failure.error;
    },
  };
}
