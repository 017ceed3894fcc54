import type { SendableJob } from '../jobs/index.js';
import type { JobType } from '../jobs/types.js';
import type { ServiceRequest } from '../api/types.js';
import type { priceGroups, summarise } from './price-jobs.js';

export type PriceSource = 'quoted' | 'derived' | 'cached';

/**
 * Jobs sharing every priced field (all but the length, for kinds priced by length): what one
 * price call, or one probed law, covers. The ledger counts them; pricing never sees the jobs.
 */
export interface PriceGroup {
  key: string;
  type: JobType;
  /** One job of the group: its priced fields are every job's. */
  sample: SendableJob;
  jobs: number;
  /** For kinds priced by length: each distinct length and how many jobs have it. */
  lengths: { chars: number; jobs: number }[];
}

export interface PriceCacheRow {
  key: string;
  priceUsd: number;
  source: 'quoted' | 'derived';
}

/** The ledger's price cache, keyed by price key; `source` is where the price first came from. */
export interface PriceCache {
  get(key: string): { priceUsd: number; source: string; ageMs: number } | undefined;
  put(rows: PriceCacheRow[]): void;
  /** Drops entries that are known to be wrong (a group whose price changed: its rate too). */
  forget(keys: string[]): void;
}

export interface PricingDeps {
  /**
   * Asks the service one price (a kind's price request). Pacing and retries are the caller's:
   * this is called at most `concurrency` at a time.
   */
  quote(request: ServiceRequest): Promise<number>;
  cache: PriceCache;
  /** Probe calls per group priced by length before deriving; default 3, at least 2 (min and max). */
  probes?: number;
  /** Price calls in flight at once; default 4. */
  concurrency?: number;
  /** Told of each call as soon as pricing decides to make it (before it waits its turn): progress. */
  onCallPlanned?: () => void;
  /**
   * Before money is spent: check every group priced from the cache with one fresh call, and
   * price the group again, without the cache, when the service's price moved.
   */
  confirmCached?: boolean;
}

/** A group summed up for the report: its priced fields, its jobs, calls and total, where its prices came from. */
export type GroupSummary = ReturnType<typeof summarise>;

/** A price for each price key, the groups summed up in the order given, the cached prices that changed. */
export type PricingResult = Awaited<ReturnType<typeof priceGroups>>;
