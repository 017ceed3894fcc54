/** From the service's wire records (snake_case, variants) to the client's camelCase shapes. */
import { escapeControlChars } from '../control-chars.js';
import type { ModelRecord, StatusData } from './schemas.js';
import type { Language, Model, ModelLimits, RemoteStatus, RequestStatus } from './types.js';

const KNOWN_STATUSES: ReadonlySet<string> = new Set(['pending', 'processing', 'done', 'error']);

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function toLimits(raw: unknown): ModelLimits {
  const limits: ModelLimits = {};
  for (const [key, value] of Object.entries(asRecord(raw))) {
    const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof number === 'number' && Number.isFinite(number)) limits[key] = number;
  }
  return limits;
}

function toInferenceTypes(raw: ModelRecord['inference_types']): string[] {
  if (raw === null || raw === undefined) return [];
  // An object keyed by type ({"<type>": {...}}) lists its types as keys.
  return Array.isArray(raw) ? raw : Object.keys(raw);
}

function toLanguages(raw: ModelRecord['languages']): Language[] {
  return (raw ?? []).map((language) => ({
    slug: language.slug,
    name: language.name ?? language.slug,
    voices: (language.voices ?? []).map((voice) => ({
      slug: voice.slug,
      name: voice.name ?? voice.slug,
      gender: voice.gender ?? undefined,
    })),
  }));
}

export function modelFromRecord(record: ModelRecord): Model {
  const info = asRecord(record.info);
  return {
    slug: record.slug,
    name: record.name ?? record.slug,
    inferenceTypes: toInferenceTypes(record.inference_types),
    limits: toLimits(info['limits']),
    features: asRecord(info['features']),
    defaults: asRecord(info['defaults']),
    languages: toLanguages(record.languages),
    loras: (record.loras ?? []).map((lora) => lora.name),
    status: record.status ?? undefined,
  };
}

function clampProgress(progress: number | undefined): number | undefined {
  return progress === undefined ? undefined : Math.min(100, Math.max(0, progress));
}

function serviceText(text: string | undefined): string | undefined {
  return text === undefined ? undefined : escapeControlChars(text);
}

/**
 * Unknown status values become 'unknown' (still running) with the raw value kept for reports.
 * The service's texts are escaped here, where they enter: they go to the ledger and the terminal.
 */
export function statusFromData(data: StatusData): RequestStatus {
  const normalized = data.status.trim().toLowerCase();
  const status = (KNOWN_STATUSES.has(normalized) ? normalized : 'unknown') as RemoteStatus;
  return {
    status,
    rawStatus: escapeControlChars(data.status),
    progress: clampProgress(data.progress),
    resultUrl: data.result_url,
    errorCode: serviceText(data.error_code),
    errorMessage: serviceText(data.error_message),
    errorReason: serviceText(data.error_reason),
    retryable: data.retryable,
    refunded: data.refunded,
  };
}
