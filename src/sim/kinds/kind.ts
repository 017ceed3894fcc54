/**
 * What a kind's file states (`KindSpec`), and what `defineKind` adds the same way for every kind:
 * the model looked up first, every problem in one 422 bag, the price law, the fingerprint, and
 * by its media the result it serves and its pace.
 */
import { createHash } from 'node:crypto';
import type { ModelSpec, SimModel } from '../catalogue.js';
import type { ClassLimit, PlanName } from '../rate-limit.js';
import { embeddingJson, mp4StandIn, pngImage, transcriptText, wavTone } from '../results.js';
import { Check, type Fields } from '../rules.js';

export type Models = ReadonlyMap<string, SimModel>;

/**
 * The simulator's price laws. Each kind computes a linear price; 'linear' keeps it, 'minimum' and
 * 'rounded' break linearity in the ways a real price list might, so clients that derive prices
 * from probes must notice and fall back to quoting.
 */
export type PricingMode = 'linear' | 'minimum' | 'rounded';

const MINIMUM_USD = 0.0005;
export const round8 = (usd: number): number => Math.round(usd * 1e8) / 1e8;

function applyMode(linearUsd: number, mode: PricingMode): number {
  if (mode === 'minimum') return round8(Math.max(MINIMUM_USD, linearUsd));
  // The small epsilon keeps 0.0012 from becoming 0.0013 through float noise.
  if (mode === 'rounded') return Math.ceil(round8(linearUsd) * 1e4 - 1e-9) / 1e4;
  return round8(linearUsd);
}

/** A request that passed: every value its rules returned, and the model it names. */
export type Checked<P> = { [K in keyof P]: Exclude<P[K], undefined> } & { model: SimModel };

type Verdict = { ok: true; value: { fingerprint: string; priceUsd: number } } | { ok: false; bag: Check };

interface KindFacts<T extends string> {
  type: T;
  /** The catalogue's records serving it (`POST /<type>`); a record listed by two kinds serves both. */
  models: readonly ModelSpec[];
  /** Its paths where they are not `<type>` and `<type>/price-calculation` (`videos/replace`). */
  paths?: { submit: string; price: string };
  /** Its submits' rate limits on each published plan. */
  plans: Record<PlanName, ClassLimit>;
  /** The kind whose submit budget it shares (the Whisper kinds share one); its own when unset. */
  paceClass?: string;
  /** The `inference_types` its models are listed under, when not its type (`aud2txt` → `audio2text`). */
  catalogueTypes?: readonly string[];
}

type Media = 'image' | 'video' | 'audio' | 'text' | 'embedding';

/** How a result is served: the URL's ending (never a reliable type), its content type, its bytes (built once). */
export type Result = { ending: string; contentType: string; bytes: () => Buffer };

/** Default time in 'pending' and in 'processing'. */
type Pace = { pendingMs: number; processingMs: number };

function served(ending: string, contentType: string, bytes: () => Buffer, pace: Pace): { result: Result; pace: Pace } {
  return { result: { ending, contentType, bytes }, pace };
}

const MEDIA: Readonly<Record<Media, ReturnType<typeof served>>> = {
  // An image's URL ends in `.image`: the service's URLs say nothing reliable about its type, so
  // clients must read its bytes.
  image: served('image', 'image/png', pngImage, { pendingMs: 100, processingMs: 400 }),
  video: served('mp4', 'video/mp4', mp4StandIn, { pendingMs: 200, processingMs: 1000 }),
  audio: served('wav', 'audio/wav', wavTone, { pendingMs: 50, processingMs: 200 }),
  // Texts and embeddings: in the status's `result` when the submit asked for it, else a file.
  text: served('txt', 'text/plain; charset=utf-8', transcriptText, { pendingMs: 50, processingMs: 200 }),
  embedding: served('json', 'application/json', embeddingJson, { pendingMs: 20, processingMs: 60 }),
};

/** A result the status may carry itself (`return_result_in_response`), not only as a file. */
export const givesResultInline = (media: Media): boolean => media === 'text' || media === 'embedding';

export interface KindSpec<T extends string, P> extends KindFacts<T> {
  media: Media;
  /** A result of its own, where its media's would not do (a cut-out's transparency), under its own ending. */
  result?: Result;
  /** Reads a price query (`forPrice`) or a submit, after its model; every problem goes in `c`'s bag. */
  check(c: Check, forPrice: boolean): P | Promise<P>;
  /** The price in USD before the pricing mode: linear in what it depends on. */
  usd(p: Checked<P>): number;
}

/** Everything the simulator knows of one endpoint; one per file in this folder, listed in kinds/index.ts. */
export interface SimKind<T extends string = string> extends KindFacts<T> {
  media: Media;
  result: Result;
  pace: Pace;
  /**
   * A price query or a submit checked: what it costs and the hash of what it asked for (two equal
   * submits, one fingerprint), or its 422 error bag.
   */
  check(fields: Fields, models: Models, mode: PricingMode, forPrice: boolean): Promise<Verdict>;
}

export function defineKind<T extends string, P>(spec: KindSpec<T, P>): SimKind<T> {
  const { check, usd, media, result, ...facts } = spec;
  return {
    ...facts,
    media,
    ...MEDIA[media],
    ...(result === undefined ? {} : { result }),
    async check(fields, models, mode, forPrice) {
      const c = new Check(fields, models, facts.catalogueTypes ?? [facts.type]);
      const read = await check(c, forPrice);
      if (!c.empty || !c.model) return { ok: false, bag: c };
      // Each rule that leaves a value undefined puts its error in the bag: with the bag empty, none is.
      const p = { ...read, model: c.model } as Checked<P>;
      // Every value its rules read makes the job what it is. Numbers are parsed before they are
      // hashed, so JSON and multipart spellings of a job agree.
      const canonicalJson = JSON.stringify([facts.type, p.model.slug, ...Object.values(read as object)]);
      const fingerprint = createHash('sha256').update(canonicalJson).digest('hex');
      return { ok: true, value: { priceUsd: applyMode(usd(p), mode), fingerprint } };
    },
  };
}
