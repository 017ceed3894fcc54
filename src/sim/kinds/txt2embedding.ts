/** `POST /txt2embedding`, JSON; the embedding comes in the status (`return_result_in_response`) or as a file. */
import { charCount, type Check } from '../rules.js';
import { defineKind } from './kind.js';

/** About 0.0003 USD for a short text: priced by the input's length. */
const USD_PER_CHAR = 0.000002;

/** Laravel's `boolean` rule: the string `"true"` is refused. */
function flag(c: Check, field: string): boolean | null | undefined {
  const value = c.fields[field];
  if (value === undefined || value === null) return null;
  if ([true, 1, '1'].includes(value as never)) return true;
  if ([false, 0, '0'].includes(value as never)) return false;
  return c.add(field, `The ${field.replace(/_/g, ' ')} field must be true or false.`);
}

export const txt2embedding = defineKind({
  type: 'txt2embedding',
  models: [{ name: 'BGE M3', slug: 'Bge_M3_FP16' }],
  // The price query takes the input and the model, as the submit does.
  check: (c, forPrice) => ({ input: c.string('input'), inline: forPrice ? null : flag(c, 'return_result_in_response') }),
  usd: (p) => USD_PER_CHAR * charCount(p.input) * p.model.priceFactor,
  media: 'embedding',
  plans: { basic: { perMinute: 10, perDay: 500 }, premium: { perMinute: 300 } },
});
