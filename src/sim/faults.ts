/**
 * The fault spec: which failures the simulator injects, how often, and on which endpoints.
 *
 * Grammar (whitespace ignored, empty string = no faults):
 *   spec  := entry ("," entry)*
 *   entry := [scope ":"] kind "=" probability
 *   scope := "submit" | "price" | "status"        (no scope = all three)
 *   kind  := "503" | "500-before" | "500-after" | "reset-before" | "reset-after" | "slow" | "html502"
 *   probability := a number in [0, 1]
 * For every scope, the probabilities that apply to it (its own plus the unscoped ones) must sum to ≤ 1.
 */

export const FAULT_KINDS = ['503', '500-before', '500-after', 'reset-before', 'reset-after', 'slow', 'html502'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_SCOPES = ['submit', 'price', 'status'] as const;
export type FaultScope = (typeof FAULT_SCOPES)[number];

export interface FaultEntry {
  kind: FaultKind;
  probability: number;
}

/** Per scope, the faults that apply to it in the order they were written (unscoped ones first). */
export type FaultSpec = Record<FaultScope, FaultEntry[]>;

function isKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
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
    throw new Error(`fault "${raw}": unknown kind "${kindText}", expected one of ${FAULT_KINDS.join(', ')}`);
  }
  const probability = value === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
    throw new Error(`fault "${raw}": probability must be a number between 0 and 1, got "${value}"`);
  }
  return { scope: scopeText, entry: { kind: kindText, probability } };
}

/** Parses a fault spec; throws an Error naming the bad entry and what was expected. */
export function parseFaultSpec(spec: string): FaultSpec {
  const result: FaultSpec = { submit: [], price: [], status: [] };
  const seen = new Set<string>();
  const parts = spec.split(',').map((p) => p.trim());
  if (parts.length === 1 && parts[0] === '') return result;
  for (const part of parts) {
    if (part === '') throw new Error(`fault spec "${spec}": empty entry (stray comma?)`);
    const { scope, entry } = parseEntry(part);
    for (const target of scope === undefined ? FAULT_SCOPES : [scope]) {
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
