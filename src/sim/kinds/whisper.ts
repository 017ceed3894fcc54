/**
 * What the five transcription ("Whisper") kinds share: one model, one submit budget, the flags,
 * a price per started second of the source, and a transcript for a result. They differ in where
 * the source comes from (a URL the service fetches, a file) and what a price query may give instead.
 */
import { createHash } from 'node:crypto';
import { mediaFacts } from '../../media-type.js';
import { attribute, type Check, type UploadRule } from '../rules.js';
import { defineKind, type SimKind } from './kind.js';

/** About 0.36 USD an hour of speech. */
const USD_PER_SECOND = 0.0001;

/** Transcription models may have `info: []` (API.md). */
const WHISPER = { name: 'Whisper large v3', slug: 'WhisperLargeV3', emptyInfo: true };

export interface Sources {
  /** The field of a URL the service fetches (and measures) itself. */
  url?: string;
  /** The field of an uploaded file and what it takes. */
  file?: { field: string; rule: UploadRule };
  /** A price query may give the length instead, as an integer or any number of seconds. */
  duration?: 'integer' | 'number';
}

/** A source, fetched or uploaded: what it is (its URL or bytes' hash) and how long it lasts. */
type Source = { source: string; seconds: number };

/** A URL's length as the service would find it fetching the URL: the same URL, the same length. */
function urlSeconds(url: string): number {
  return 30 + (createHash('sha256').update(url).digest().readUInt32BE(0) % 3600);
}

function validUrl(c: Check, field: string): Source | undefined {
  const given = c.string(field);
  if (given === undefined) return undefined;
  const protocol = URL.canParse(given) ? new URL(given).protocol : '';
  const web = protocol === 'http:' || protocol === 'https:';
  if (!web) return c.add(field, `The ${attribute(field)} field must be a valid URL.`);
  return { source: given, seconds: urlSeconds(given) };
}

async function uploaded(c: Check, { field, rule }: NonNullable<Sources['file']>): Promise<Source | undefined> {
  const upload = await c.upload(field, true, rule);
  if (!upload) return undefined;
  const { durationSec, hasVideo } = await mediaFacts(upload.bytes);
  if (durationSec === undefined) return c.add(field, `The ${attribute(field)} field could not be read.`);
  // A field that takes either medium keeps audio to the audio limit.
  if (rule.kinds.length > 1 && !hasVideo && upload.bytes.length > AUDIO_KB * 1024) {
    return c.add(field, `The ${attribute(field)} field must not be greater than ${AUDIO_KB} kilobytes.`);
  }
  return { source: upload.sha256, seconds: durationSec };
}

const AUDIO_KB = 20 * 1024;

/** Exactly one of the ways a request may give its source, read; every problem in the bag. */
async function sourceOf(c: Check, sources: Sources, forPrice: boolean): Promise<Source | undefined> {
  const ways = [sources.url, sources.file?.field, forPrice ? sources.duration && 'duration_seconds' : undefined];
  const open = ways.filter((field): field is string => field !== undefined);
  const given = open.filter((field) => ![undefined, null, ''].includes(c.fields[field] as never));
  const [first, second] = given;
  if (first === undefined) {
    const others = open.slice(1).map(attribute).join(' / ');
    const when = others === '' ? '' : ` when ${others} is not present`;
    return c.add(open[0] ?? 'source', `The ${attribute(open[0] ?? 'source')} field is required${when}.`);
  }
  if (second !== undefined) {
    return c.add(first, `The ${attribute(first)} field prohibits ${attribute(second)} from being present.`);
  }
  if (first === sources.url) return validUrl(c, first);
  if (first === sources.file?.field) return uploaded(c, sources.file);
  const seconds = c.number('duration_seconds', { integer: sources.duration === 'integer', min: 1 });
  return seconds === undefined ? undefined : { source: 'duration', seconds };
}

/** The Laravel `required|boolean` of `include_ts`. */
function requiredFlag(c: Check, field: string): boolean | undefined {
  const value = c.flag(field);
  return value === null ? c.add(field, `The ${attribute(field)} field is required.`) : value;
}

/** A transcription kind: where its source comes from, and the catalogue's names it is served under. */
export function whisperKind<T extends string>(
  type: T,
  sources: Sources,
  catalogueTypes: readonly string[],
): SimKind<T> {
  return defineKind({
    type,
    models: [WHISPER],
    catalogueTypes,
    check: async (c, forPrice) => {
      const includeTs = requiredFlag(c, 'include_ts');
      const inline = forPrice ? null : c.flag('return_result_in_response');
      const source = await sourceOf(c, sources, forPrice);
      return { includeTs, inline, source: source?.source, seconds: source?.seconds };
    },
    usd: (p) => USD_PER_SECOND * Math.ceil(p.seconds) * p.model.priceFactor,
    media: 'text',
    plans: { basic: { perMinute: 1, perDay: 10 }, premium: { perMinute: 300 } },
    paceClass: 'transcribe',
  });
}
