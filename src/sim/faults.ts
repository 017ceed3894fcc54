/**
 * The fault spec: which failures the simulator injects, how often, and where: in its answers
 * (submit, price, status) or in the webhook deliveries it makes (what each kind does:
 * docs/commands.md, "The simulator"; webhooks.ts).
 *
 * Grammar (whitespace ignored, empty string = no faults):
 *   spec  := entry ("," entry)*
 *   entry := [scope ":"] kind "=" probability      (probability: a number in [0, 1])
 *   scope := "submit" | "price" | "status" | "webhook"
 * FAULT_KINDS are faults of the answers: unscoped, they apply to submit, price and status.
 * WEBHOOK_FAULT_KINDS take only the scope `webhook`, and are drawn once per event.
 * For every scope, the probabilities that apply to it must sum to ≤ 1.
 */

export const FAULT_KINDS = ['503', '500-before', '500-after', 'reset-before', 'reset-after', 'slow', 'html502'] as const;
export const WEBHOOK_FAULT_KINDS = ['duplicate', 'reorder', 'bad-signature', 'stale', 'replay', 'oversized', 'forged'] as const;
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];
export type FaultKind = (typeof FAULT_KINDS)[number] | WebhookFaultKind;

const FAULT_SCOPES = ['submit', 'price', 'status', 'webhook'] as const;
export type FaultScope = (typeof FAULT_SCOPES)[number];
const ANSWER_SCOPES = ['submit', 'price', 'status'] as const;

/** Per scope, the faults that apply to it in the order they were written (unscoped ones first). */
export type FaultSpec = Record<FaultScope, { kind: FaultKind; probability: number }[]>;

const among = <T extends string>(list: readonly T[], value: string | undefined): value is T =>
  (list as readonly (string | undefined)[]).includes(value);

function parseEntry(raw: string): { scope: FaultScope | undefined; kind: FaultKind; probability: number } {
  if (!raw.includes('=')) throw new Error(`fault "${raw}": expected kind=probability, e.g. 503=0.1`);
  const [head = '', value = ''] = raw.split(/=(.*)/s).map((part) => part.trim());
  const [scope, kind = ''] = head.includes(':') ? head.split(/:(.*)/s).map((part) => part.trim()) : [undefined, head];
  if (scope !== undefined && !among(FAULT_SCOPES, scope)) {
    throw new Error(`fault "${raw}": unknown scope "${scope}", expected one of ${FAULT_SCOPES.join(', ')}`);
  }
  const webhookKind = among(WEBHOOK_FAULT_KINDS, kind);
  if (!webhookKind && !among(FAULT_KINDS, kind)) {
    const expected = `${FAULT_KINDS.join(', ')} (answers) or ${WEBHOOK_FAULT_KINDS.join(', ')} (webhook deliveries)`;
    throw new Error(`fault "${raw}": unknown kind "${kind}", expected one of ${expected}`);
  }
  if (scope !== undefined && (scope === 'webhook') !== webhookKind) {
    const where = webhookKind
      ? `a fault of webhook deliveries: write it as webhook:${kind}`
      : `a fault of the answers (${ANSWER_SCOPES.join(', ')}), not of webhook deliveries`;
    throw new Error(`fault "${raw}": ${kind} is ${where}`);
  }
  const probability = value === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
    throw new Error(`fault "${raw}": probability must be a number between 0 and 1, got "${value}"`);
  }
  return { scope, kind, probability };
}

/** Parses a fault spec; throws an Error naming the bad entry and what was expected. */
export function parseFaultSpec(spec: string): FaultSpec {
  const result: FaultSpec = { submit: [], price: [], status: [], webhook: [] };
  if (spec.trim() === '') return result;
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '') throw new Error(`fault spec "${spec}": empty entry (stray comma?)`);
    const { scope, kind, probability } = parseEntry(part);
    const unscoped: readonly FaultScope[] = among(WEBHOOK_FAULT_KINDS, kind) ? ['webhook'] : ANSWER_SCOPES;
    for (const target of scope === undefined ? unscoped : [scope]) {
      if (result[target].some((entry) => entry.kind === kind)) {
        throw new Error(`fault "${part}": ${kind} is given twice for ${target}`);
      }
      result[target].push({ kind, probability });
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
