/**
 * The fault spec: which failures the simulator injects, how often, and where: in its answers
 * (submit, price, status) or in the webhook deliveries it makes.
 *
 * Grammar (whitespace ignored, empty string = no faults):
 *   spec  := entry ("," entry)*
 *   entry := [scope ":"] kind "=" probability
 *   scope := "submit" | "price" | "status" | "webhook"
 *   kind  := "503" | "500-before" | "500-after" | "reset-before" | "reset-after" | "slow" | "html502"
 *          | "duplicate" | "reorder" | "bad-signature" | "stale" | "replay" | "oversized" | "forged"
 *   probability := a number in [0, 1]
 * The first seven are faults of the answers: unscoped, they apply to submit, price and status.
 * The rest are faults of webhook deliveries (scope `webhook`, the only one they take), drawn per
 * event: `duplicate` sends a delivered event again with the same id; `replay` resends its exact
 * bytes and headers; `reorder` delivers a job's `job.processing` after its end; `bad-signature`,
 * `stale` (a timestamp 10 minutes old) and `oversized` (a body over 1 MiB) spoil the first
 * attempt, which the receiver must refuse, and the retry is clean; `forged` adds a request
 * naming another job under the original signature, which the receiver must refuse.
 * For every scope, the probabilities that apply to it must sum to ≤ 1.
 */

export const FAULT_KINDS = ['503', '500-before', '500-after', 'reset-before', 'reset-after', 'slow', 'html502'] as const;
export const WEBHOOK_FAULT_KINDS = ['duplicate', 'reorder', 'bad-signature', 'stale', 'replay', 'oversized', 'forged'] as const;
export type AnswerFaultKind = (typeof FAULT_KINDS)[number];
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];
export type FaultKind = AnswerFaultKind | WebhookFaultKind;

export const FAULT_SCOPES = ['submit', 'price', 'status', 'webhook'] as const;
export type FaultScope = (typeof FAULT_SCOPES)[number];
const ANSWER_SCOPES = ['submit', 'price', 'status'] as const;

export interface FaultEntry {
  kind: FaultKind;
  probability: number;
}

/** Per scope, the faults that apply to it in the order they were written (unscoped ones first). */
export type FaultSpec = Record<FaultScope, FaultEntry[]>;

function isKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value) || isWebhookKind(value);
}

function isWebhookKind(value: string): value is WebhookFaultKind {
  return (WEBHOOK_FAULT_KINDS as readonly string[]).includes(value);
}

function isScope(value: string): value is FaultScope {
  return (FAULT_SCOPES as readonly string[]).includes(value);
}

function parseEntry(raw: string): { scope: FaultScope | undefined; entry: FaultEntry } {
  const eq = raw.indexOf('=');
  if (eq < 0) throw new Error(`fault "${raw}": expected kind=probability, e.g. 503=0.1`);
  const head = raw.slice(0, eq).trim();
  const value = raw.slice(eq + 1).trim();
  const colon = head.indexOf(':');
  const scopeText = colon < 0 ? undefined : head.slice(0, colon).trim();
  const kindText = colon < 0 ? head : head.slice(colon + 1).trim();
  if (scopeText !== undefined && !isScope(scopeText)) {
    throw new Error(`fault "${raw}": unknown scope "${scopeText}", expected one of ${FAULT_SCOPES.join(', ')}`);
  }
  if (!isKind(kindText)) {
    throw new Error(
      `fault "${raw}": unknown kind "${kindText}", expected one of ${FAULT_KINDS.join(', ')} (answers) or ${WEBHOOK_FAULT_KINDS.join(', ')} (webhook deliveries)`,
    );
  }
  if (scopeText !== undefined && (scopeText === 'webhook') !== isWebhookKind(kindText)) {
    const where = isWebhookKind(kindText) ? 'a fault of webhook deliveries: write it as webhook:' + kindText : `a fault of the answers (${ANSWER_SCOPES.join(', ')}), not of webhook deliveries`;
    throw new Error(`fault "${raw}": ${kindText} is ${where}`);
  }
  const probability = value === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
    throw new Error(`fault "${raw}": probability must be a number between 0 and 1, got "${value}"`);
  }
  return { scope: scopeText, entry: { kind: kindText, probability } };
}

/** Parses a fault spec; throws an Error naming the bad entry and what was expected. */
export function parseFaultSpec(spec: string): FaultSpec {
  const result: FaultSpec = { submit: [], price: [], status: [], webhook: [] };
  const seen = new Set<string>();
  const parts = spec.split(',').map((p) => p.trim());
  if (parts.length === 1 && parts[0] === '') return result;
  for (const part of parts) {
    if (part === '') throw new Error(`fault spec "${spec}": empty entry (stray comma?)`);
    const { scope, entry } = parseEntry(part);
    const unscoped: readonly FaultScope[] = isWebhookKind(entry.kind) ? ['webhook'] : ANSWER_SCOPES;
    for (const target of scope === undefined ? unscoped : [scope]) {
      const key = `${target}:${entry.kind}`;
      if (seen.has(key)) throw new Error(`fault "${part}": ${entry.kind} is given twice for ${target}`);
      seen.add(key);
      result[target].push(entry);
    }
  }
  for (const scope of FAULT_SCOPES) {
    const total = result[scope].reduce((sum, e) => sum + e.probability, 0);
    if (total > 1 + 1e-9) {
      throw new Error(`fault spec "${spec}": probabilities for ${scope} add up to ${Number(total.toFixed(6))}, more than 1`);
    }
  }
  return result;
}

/** Maps one uniform draw to the fault it selects for `scope`, or undefined for a clean answer. */
export function pickFault(spec: FaultSpec, scope: FaultScope, draw: number): FaultKind | undefined {
  let upper = 0;
  for (const entry of spec[scope]) {
    upper += entry.probability;
    if (draw < upper) return entry.kind;
  }
  return undefined;
}
