/**
 * Shapes of the service's 2xx answers, and what they become for the runner: its wire records
 * (snake_case, variants) turned into the client's camelCase shapes (types.ts). Loose where the
 * service may add fields; strict on the few values the runner relies on (ids, prices, statuses),
 * accepting the variants docs/service.md says have been seen (numbers as strings, `info: []`,
 * inference_types as an object, …).
 */
import { z } from 'zod';
import { escapeControlChars } from '../control-chars.js';
import type { RequestStatus } from './types.js';

/** A finite number, also when sent as a numeric string. */
const number = z
  .union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'not a number').transform(Number)])
  .pipe(z.number().finite());

/** A number if the value reads as one (number or numeric string), else undefined: never fails. */
function readNumber(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

/** A field read by `read` from whatever came: a value, or undefined; it never fails. */
const lenient = <T>(read: (value: unknown) => T | undefined) => z.unknown().transform(read).optional();

/** The service's texts are escaped where they enter: they go to the ledger and the terminal. */
const serviceText = lenient((value) => (typeof value === 'string' && value ? escapeControlChars(value) : undefined));

function readBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 'true' || value === 1 || value === '1') return true;
  if (value === false || value === 'false' || value === 0 || value === '0') return false;
  return undefined;
}

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

/** A result in the status: text as it came, a JSON value (an embedding's numbers) as JSON text. */
function inlineResult(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  return value === null || value === undefined ? undefined : JSON.stringify(value);
}

const KNOWN_STATUSES: ReadonlySet<string> = new Set(['pending', 'processing', 'done', 'error']);

/** Unknown status values become 'unknown' (still running) with the raw value kept for reports. */
export const statusAnswer = z.looseObject({
  data: z
    .looseObject({
      status: z.string().min(1),
      progress: lenient(readNumber),
      result_url: lenient((value) => (typeof value === 'string' && value !== '' ? value : undefined)),
      result: lenient(inlineResult),
      error_code: serviceText,
      error_message: serviceText,
      error_reason: serviceText,
      retryable: lenient(readBoolean),
      refunded: lenient(readBoolean),
    })
    .transform((data): RequestStatus => {
      const normalized = data.status.trim().toLowerCase();
      return {
        status: (KNOWN_STATUSES.has(normalized) ? normalized : 'unknown') as RequestStatus['status'],
        rawStatus: escapeControlChars(data.status),
        progress: data.progress === undefined ? undefined : Math.min(100, Math.max(0, data.progress)),
        resultUrl: data.result_url,
        result: data.result,
        errorCode: data.error_code,
        errorMessage: data.error_message,
        errorReason: data.error_reason,
        retryable: data.retryable,
        refunded: data.refunded,
      };
    }),
});

/** A section of `info`: an object, or `[]` (PHP's empty array) read as no entries. */
const section = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .nullish()
  .transform((value): Record<string, unknown> => (Array.isArray(value) ? {} : (value ?? {})));

const voiceRecord = z
  .looseObject({ slug: z.string().min(1), name: z.string().optional(), gender: z.string().nullish() })
  .transform((voice) => ({ slug: voice.slug, name: voice.name ?? voice.slug, gender: voice.gender ?? undefined }));

const languageRecord = z
  .looseObject({ slug: z.string().min(1), name: z.string().optional(), voices: z.array(voiceRecord).nullish() })
  .transform((lang) => ({ slug: lang.slug, name: lang.name ?? lang.slug, voices: lang.voices ?? [] }));

/** `info` is an object of optional sections, or `[]` when the model has none (PHP's empty array). */
const infoRecord = z.union([
  z.array(z.unknown()).max(0).transform(() => undefined),
  z.looseObject({ limits: section, features: section, defaults: section }),
]);

const modelRecord = z
  .looseObject({
    slug: z.string().min(1),
    name: z.string().optional(),
    inference_types: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).nullish(),
    info: infoRecord.nullish(),
    languages: z.array(languageRecord).nullish(),
    loras: z.array(z.looseObject({ name: z.string().min(1) })).nullish(),
    status: z.string().nullish(),
  })
  .transform((record) => {
    const types = record.inference_types ?? [];
    const limits = Object.entries(record.info?.limits ?? {}).map(([key, value]) => [key, readNumber(value)] as const);
    return {
      slug: record.slug,
      name: record.name ?? record.slug,
      // An object keyed by type ({"<type>": {...}}) lists its types as keys.
      inferenceTypes: Array.isArray(types) ? types : Object.keys(types),
      /** `info.limits`, e.g. min_speed, max_speed, min_text, max_text, min_width, max_frames … */
      limits: Object.fromEntries(limits.filter(([, value]) => value !== undefined)),
      /** `info.features`, e.g. supports_last_frame. */
      features: record.info?.features ?? {},
      defaults: record.info?.defaults ?? {},
      languages: record.languages ?? [],
      /** Names of the LoRA models it offers (text-to-image models that support them). */
      loras: (record.loras ?? []).map((lora) => lora.name),
      status: record.status ?? undefined,
    };
  });

/** A model of the catalogue, as the runner and the manifest's checks see it. */
export type Model = z.output<typeof modelRecord>;

export const modelsPage = z.looseObject({
  data: z.array(modelRecord),
  meta: z.looseObject({
    current_page: z.coerce.number().int().positive().optional(),
    last_page: z.coerce.number().int().nonnegative(),
  }),
});
