import type { SimModel } from '../catalogue.js';
import type { ClassLimit, PlanName } from '../plans.js';
import type { PricingMode } from '../pricing.js';
import type { Fields } from '../rules.js';
import type { Validated } from '../validate.js';

export type Models = ReadonlyMap<string, SimModel>;

/** What an accepted submit costs and the hash of what it asked for (two equal submits, one fingerprint). */
export interface Accepted {
  fingerprint: string;
  priceUsd: number;
}

/**
 * Everything the simulator knows of one endpoint (`POST /<type>` and its price calculation):
 * one object per file in this folder, listed in kinds/index.ts. The shared files name no kind.
 */
export interface SimKind<T extends string = string> {
  type: T;
  /** The catalogue's records serving it; a record shared by two kinds is listed by both. */
  models: readonly SimModel[];
  /** A price query checked and priced (USD), or its 422 error bag. */
  price(fields: Fields, models: Models, mode: PricingMode): Validated<number>;
  /** A submit checked; what it costs and its fingerprint, or its 422 error bag. */
  submit(fields: Fields, models: Models, mode: PricingMode): Validated<Accepted> | Promise<Validated<Accepted>>;
  /** How its result is served: the URL's ending (never a reliable type), its content type, its bytes (built once). */
  result: { ending: string; contentType: string; bytes: () => Buffer };
  /** Default time in 'pending' and in 'processing'. */
  pace: { pendingMs: number; processingMs: number };
  /** Its submits' rate limits on each published plan. */
  plans: Record<PlanName, ClassLimit>;
}
