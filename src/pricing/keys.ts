import { kindOf, type SendableJob } from '../jobs/index.js';
import { canonicalJson } from '../manifest/content-hash.js';

/**
 * Price keys name the parameters a price depends on (each kind lists them: `pricing.keyFields`).
 * The version prefix lets a later change in what a price depends on invalidate every cached
 * price at once instead of reusing wrong ones.
 */
const PRICE_KEY_VERSION = 'v1';

// Components are URI-encoded so a `|` inside a slug can never make two parameter sets collide; a
// structured one (an image kind's `loras`) is keyed by its JSON, not by String()'s "[object Object]",
// which would let different LoRAs share one cached price.
function join(parts: readonly unknown[]): string {
  return parts.map((part) => encodeURIComponent(typeof part === 'object' && part !== null ? canonicalJson(part) : String(part))).join('|');
}

/** The price group of one job: every priced field, but the length for kinds priced by length. */
export function groupKeyOf(job: Pick<SendableJob, 'type' | 'params'>): string {
  const { keyFields, laterKeyFields = [] } = kindOf(job.type).pricing;
  const later = laterKeyFields.filter((field) => job.params[field] !== undefined);
  const named = later.map((field) => `${field}=${String(job.params[field])}`);
  return join([PRICE_KEY_VERSION, job.type, ...keyFields.map((field) => job.params[field]), ...named]);
}

/** The key of one length of a group priced by length. */
export function lengthKey(groupKey: string, length: number): string {
  return `${groupKey}|chars=${length}`;
}

/** The price group a stored price key belongs to: the key itself, less the length of a length-priced job. */
export function groupOfPriceKey(priceKey: string): string {
  return priceKey.replace(/\|chars=\d+$/, '');
}

/**
 * `v1|<kind>|Kokoro|af_sky|…` as a person reads it: `<kind> Kokoro af_sky …` (the version is
 * noise, and so is the `undefined` an optional priced field a job leaves out is keyed as: the key
 * itself stays as cached prices were stored under it).
 */
export function describeGroupKey(groupKey: string): string {
  return groupKey.split('|').slice(1).filter((part) => part !== 'undefined').map(decodeURIComponent).join(' ');
}

/** The full price key of one job: what its cached price is stored under (`groupKey`: its groupKeyOf, when known). */
export function priceKeyOf(job: SendableJob, groupKey = groupKeyOf(job)): string {
  const pricing = kindOf(job.type).pricing;
  return pricing.by === 'per-length' ? lengthKey(groupKey, pricing.lengthOf(job)) : groupKey;
}

/**
 * Every key a length-priced group's confirmed linear rate (USD per character) is cached under: the
 * rate, then its companion facts, the quotes' precision and the probed range. The cache holds only
 * numbers, so these counts ride in its `priceUsd` column; without all of them the rate is not
 * reused, because deriving outside the probed range would lose the safety argument.
 */
export function rateKeys(groupKey: string): string[] {
  const rateKey = `${groupKey}|rate`;
  return [rateKey, ...['decimals', 'min-chars', 'max-chars'].map((fact) => `${rateKey}|${fact}`)];
}
