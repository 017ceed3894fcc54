/** `POST /txt2embedding`, JSON; the embedding comes in the status (`return_result_in_response`) or as a file. */
import { charCount } from '../rules.js';
import { defineKind } from './kind.js';

/** About 0.0003 USD for a short text: priced by the input's length. */
const USD_PER_CHAR = 0.000002;

export const txt2embedding = defineKind({
  type: 'txt2embedding',
  models: [{ name: 'BGE M3', slug: 'Bge_M3_FP16' }],
  // The price query takes the input and the model, as the submit does.
  check: (c, forPrice) => ({ input: c.string('input'), inline: forPrice ? null : c.flag('return_result_in_response') }),
  usd: (p) => USD_PER_CHAR * charCount(p.input) * p.model.priceFactor,
  media: 'embedding',
  plans: { basic: { perMinute: 10, perDay: 500 }, premium: { perMinute: 300 } },
});
