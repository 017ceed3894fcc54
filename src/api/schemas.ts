/**
 * Shapes of the service's 2xx answers. Loose where the service may add fields; strict on the
 * few values the runner relies on (ids, prices, statuses), accepting the variants docs/service.md says
 * have been seen (numbers as strings, `info: []`, inference_types as an object, …).
 */
import { z } from 'zod';

/** A finite number, also when sent as a numeric string. */
const number = z
  .union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'not a number').transform(Number)])
  .pipe(z.number().finite());

/** A number if the value reads as one (number or numeric string), else undefined: never fails. */
const looseNumber = z.unknown().transform((value): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
});

const optionalText = z
  .unknown()
  .transform((value): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined));

const looseBoolean = z.unknown().transform((value): boolean | undefined => {
  if (value === true || value === 'true' || value === 1 || value === '1') return true;
  if (value === false || value === 'false' || value === 0 || value === '0') return false;
  return undefined;
});

export const requestIdAnswer = z.looseObject({
  data: z.looseObject({
    request_id: z.union([z.string().trim().min(1), z.number().int().nonnegative().transform(String)]),
  }),
});

export const priceAnswer = z.looseObject({
  // Whether a number can be a price (0, negative, absurd) is pricing's call, with its own message.
  data: z.looseObject({ price: number }),
});

export const balanceAnswer = z.looseObject({
  data: z.looseObject({ balance: z.union([z.number(), z.string().transform(Number)]).pipe(z.number().finite()) }),
});

export const statusAnswer = z.looseObject({
  data: z.looseObject({
    status: z.string().min(1),
    progress: looseNumber.optional(),
    result_url: optionalText.optional(),
    error_code: optionalText.optional(),
    error_message: optionalText.optional(),
    error_reason: optionalText.optional(),
    retryable: looseBoolean.optional(),
    refunded: looseBoolean.optional(),
  }),
});

const voiceRecord = z.looseObject({
  slug: z.string().min(1),
  name: z.string().optional(),
  gender: z.string().nullish(),
});

const languageRecord = z.looseObject({
  slug: z.string().min(1),
  name: z.string().optional(),
  voices: z.array(voiceRecord).nullish(),
});

/** `info` is an object of optional sections, or `[]` when the model has none (PHP's empty array). */
const infoRecord = z.union([
  z.array(z.unknown()).max(0),
  z.looseObject({
    limits: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
    features: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
    defaults: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
  }),
]);

export const modelRecord = z.looseObject({
  slug: z.string().min(1),
  name: z.string().optional(),
  inference_types: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).nullish(),
  info: infoRecord.nullish(),
  languages: z.array(languageRecord).nullish(),
  /** LoRA models a diffusion model offers; present only where it supports them. */
  loras: z.array(z.looseObject({ name: z.string().min(1) })).nullish(),
  status: z.string().nullish(),
});

export const modelsPage = z.looseObject({
  data: z.array(modelRecord),
  meta: z.looseObject({
    current_page: z.coerce.number().int().positive().optional(),
    last_page: z.coerce.number().int().nonnegative(),
  }),
});

export type ModelRecord = z.output<typeof modelRecord>;
export type StatusData = z.output<typeof statusAnswer>['data'];
