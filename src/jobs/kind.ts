import { basename } from 'node:path';
import type * as z from 'zod';
import type { Model, MultipartFile, ServiceRequest } from '../api/types.js';
import type { FileMedia, MediaKind } from '../media-type.js';
import type { MediaRef, ResolvedJob, SendableJob } from './job.js';
import type { JobType } from './types.js';

export type { MultipartFile, ServiceRequest } from '../api/types.js';

/**
 * One kind of job the service offers, everything mediabatch knows about it in one object: its
 * manifest fields, how a job of it is checked, priced, sent, followed and saved, and how fast it
 * may be sent. Every other module looks a kind up by `job.type` (jobs/index.ts); none branches on
 * the type itself, so a new kind is one module here, not edits across the tree.
 */
export interface JobKind<T extends string = JobType> {
  type: T;
  /** One line for the JSON Schema and messages: what it makes and what a job must give. */
  title: string;
  /** Fields a job may set itself or take from `defaults.<type>`. */
  params: Readonly<Record<string, FieldSpec>>;
  /** Fields only a job itself may set: what it is about (text, prompt, images). */
  content: Readonly<Record<string, FieldSpec>>;
  /** Fields every job must end up with once defaults are merged. */
  required: readonly string[];
  /** Two fields of which a job gives exactly one (`text` or `text_file`). */
  exactlyOne?: readonly [string, string];
  /** Fields that name a file the manifest reads, and what the file must be. */
  files: Readonly<Record<string, FileSpec>>;
  /** The field whose text a `text` file fills in (`text_file` → `text`). */
  textFrom?: { file: string; field: string };
  /**
   * A kind whose text may be cut into parts (`split:` on a job): which field holds the text, and
   * the most characters a model takes in one job (undefined: the model states no limit).
   */
  splittable?: { field: string; maxChars(model: Model): number | undefined };
  /** Problems of a resolved job against its model in the service's catalogue. */
  checkModel(job: ResolvedJob, model: Model, models: readonly Model[], report: ReportProblem): void;
  pricing: KindPricing;
  /** The generation request for one job. */
  submit(job: SendableJob): ServiceRequest;
  output: KindOutput;
  /** How often a running job of this kind is asked about. */
  poll: { service: PollSchedule; simulator: PollSchedule };
  /** Submits allowed by each plan (the service counts each kind's submits apart, but for a shared budget). */
  plans: Readonly<Record<PlanName, ClassLimit>>;
  /** The kind whose submit budget it shares (the transcription kinds share one); its own type when unset. */
  paceClass?: JobType;
  /**
   * The `inference_types` the catalogue lists its models under (the walk's filter), where they are
   * not its type (`audio2video`); none where the catalogue has no name for it: its model is not
   * checked there, the service alone judges it.
   */
  catalogueTypes?: readonly string[];
}

export interface FieldSpec {
  schema: z.ZodType;
  /** What a message says was expected: "a whole number above 0". */
  expected: string;
  /** The field names a file the manifest reads, and what the file must be. */
  file?: FileSpec;
  /** Text of the job's content that another job's text result may give instead (jobs/inputs.ts). */
  takesText?: true;
  /** A job may leave it out; every other field but an `exactlyOne` pair is required. */
  optional?: true;
  /** An optional field a job must give all the same when another has one of these values (undefined: left out). */
  requiredWhen?: { field: string; in: readonly (string | undefined)[] };
}

/**
 * The fields a job with these values must give: the kind's required ones and those its values call
 * for. A value already rejected (`rejected`) calls for nothing: its one message is enough.
 */
export function requiredFor(
  kind: JobKind,
  fields: Readonly<Record<string, unknown>>,
  rejected: ReadonlySet<string> = new Set(),
): readonly string[] {
  const calls = ({ field, in: values }: NonNullable<FieldSpec['requiredWhen']>): boolean =>
    !rejected.has(field) && values.includes(fields[field] as string | undefined);
  const conditional = Object.entries({ ...kind.content, ...kind.params }).flatMap(([name, { requiredWhen }]) =>
    requiredWhen !== undefined && calls(requiredWhen) ? [name] : [],
  );
  if (conditional.length === 0) return kind.required;
  // In the order the kind lists its fields, as its messages always were.
  const names = Object.keys({ ...kind.content, ...kind.params });
  return names.filter((name) => kind.required.includes(name) || conditional.includes(name));
}

/** A text file the manifest reads (its text is the job's), or a media file the job uploads. */
export type FileSpec = 'text' | MediaField;

/** What a media file's container may state, read once when the manifest is; `wholeSec` is its length rounded up. */
export type MediaFact = 'durationSec' | 'width' | 'height' | 'wholeSec';

/** A fact of a file as read; a price in whole seconds counts a started second as one. */
type Read = Partial<Record<'durationSec' | 'width' | 'height', number>>;

export function factOf(read: Read, fact: MediaFact): number | undefined {
  if (fact !== 'wholeSec') return read[fact];
  return read.durationSec === undefined ? undefined : Math.ceil(read.durationSec);
}

/**
 * A field that uploads media: the media it takes, each with its most bytes (a field that takes
 * audio or video has a limit for each), and what else the file must show by its bytes.
 */
export interface MediaField {
  maxBytes: Readonly<Partial<Record<FileMedia, number>>>;
  /**
   * The formats it takes, by media-type.ts's names, when not every one of its media: 'Ogg', 'WAV' …
   * (an MP3 is 'MP3' with a tag and 'MPEG audio' without, as is AAC in ADTS: list both).
   */
  formats?: readonly string[];
  /** Stated bounds of an audio or video file's length. */
  durationSec?: { min?: number; max?: number };
  /** Facts its kind prices by, copied into the job's parameters under these names (never sent with the submit). */
  facts?: Readonly<Record<string, MediaFact>>;
  /** Several files in one field (a list in the manifest), sent as repeated `<field>[]` parts. */
  list?: true;
}

/**
 * Reports one problem of a job against the catalogue. `got` is a value the manifest's messages
 * show their own way (quoted, cut short), or text already in words ("1,500 characters").
 */
export type ReportProblem = (field: string, expected: string, got: { value: unknown } | { text: string }, hint?: string) => void;

/**
 * How a kind is priced. `per-key`: one call per distinct key (the priced fields), shared by every
 * job with those values. `per-length`: a price per text length for the other fields, which the
 * pricing module may probe and derive (pricing/linear-fit.ts) instead of quoting every length.
 */
export type KindPricing = {
  /** The fields the price depends on (but the length), in the order the cache key lists them. */
  keyFields: readonly string[];
  /**
   * Priced fields a kind came to take after prices were cached: keyed by name, and only when a job
   * sets them, so the keys of prices cached before them stay valid.
   */
  laterKeyFields?: readonly string[];
} & (
  | { by: 'per-key'; request(job: SendableJob): ServiceRequest }
  | { by: 'per-length'; lengthOf(job: SendableJob): number; request(job: SendableJob, length: number): ServiceRequest }
);

export interface KindOutput {
  /** What a result must be, by its bytes: a storage error page is never a result. */
  media: MediaKind;
  /**
   * The file extension of a result: from the type its bytes showed (mime), else the URL's
   * extension when it is one this kind produces, else the kind's default for the job.
   */
  extension(job: Pick<SendableJob, 'params'>, found: { mime?: string | undefined; urlExtension?: string }): string;
}

/** How often a running job is asked about: from `firstMs`, growing by `factor` to `maxMs`. */
export interface PollSchedule {
  firstMs: number;
  maxMs: number;
  factor: number;
  /** Stop waiting (the job stays `submitted` and the next run collects it). */
  giveUpMs: number;
}

export type PlanName = 'basic' | 'premium';

/** Requests allowed per minute and (reset at 00:00 UTC) per day; undefined: no daily cap stated. */
export interface ClassLimit {
  perMinute: number;
  perDay?: number | undefined;
}

type Defaulted = 'files' | 'checkModel' | 'poll' | 'output' | 'submit' | 'pricing' | 'required';

/** The submit's body: JSON, or multipart when it uploads media, or (`json-unless-files`) only when a job has files. */
type Body = 'json-unless-files';

/**
 * What a kind's module writes: its data and its rules. The rest is derived: from its fields'
 * specs the files and (unless it lists them in its own order) the required fields; from its media
 * the output and poll; and unless it writes its own `submit`, a request to `POST /<type>` carrying
 * its fields (JSON, or multipart when it uploads media).
 */
export type KindSpec<T extends string> = Omit<JobKind<T>, Defaulted> &
  Partial<Pick<JobKind<T>, 'checkModel' | 'poll' | 'submit' | 'required'>> & {
    media: MediaKind;
    pricing: PricingSpec;
    /** Its paths where they are not `<type>` and `<type>/price-calculation` (`videos/replace`). */
    paths?: { submit: string; price: string };
    body?: Body;
  };

/**
 * The price call, `POST /<type>/price-calculation`: with the key fields, or with the submit's
 * (`carries: 'submit'`, or those of its fields listed), as JSON or (`multipart`) as form fields;
 * a per-length kind adds the text's length as `lengthField`.
 */
type PricingSpec =
  | {
      by: 'per-key';
      keyFields: readonly string[];
      carries?: 'key' | 'submit' | readonly string[];
      multipart?: true;
      /** The price call's fields from the key fields, where they are not the key fields themselves. */
      body?: (key: Readonly<Record<string, unknown>>) => Record<string, unknown>;
    }
  | { by: 'per-length'; keyFields: readonly string[]; laterKeyFields?: readonly string[]; lengthField: string };

/**
 * By media: the extensions a result may have (the first is the default, unless a job's `format`
 * names another) and the poll schedule, as the service's clients poll: images from 2 s, video
 * from 5 s up to 30 s (giving up after 15 min), speech from 1.5 s up to 8 s, transcripts and OCR
 * from 3 s up to 15 s, embeddings from 0.5 s up to 3 s (giving up after 2 min). A text result is
 * `<id>.txt` (its structure, when it has one, beside it as `<id>.json`); an embedding `<id>.json`.
 */
const MEDIA: Readonly<Record<MediaKind, { extensions: readonly string[]; poll: JobKind['poll'] }>> = {
  image: {
    extensions: ['png', 'jpg', 'webp'],
    poll: { service: growing(2000, 10_000, 10 * 60_000), simulator: growing(150, 1000, 60_000) },
  },
  video: {
    extensions: ['mp4', 'webm', 'mov', 'gif'],
    poll: { service: growing(5000, 30_000, 15 * 60_000), simulator: growing(300, 2000, 120_000) },
  },
  audio: {
    extensions: ['mp3', 'wav', 'flac', 'ogg', 'opus', 'aac', 'm4a'],
    poll: { service: growing(1500, 8000, 10 * 60_000), simulator: growing(150, 1000, 60_000) },
  },
  text: {
    extensions: ['txt'],
    poll: { service: growing(3000, 15_000, 15 * 60_000), simulator: growing(150, 1000, 60_000) },
  },
  embedding: {
    extensions: ['json'],
    poll: { service: growing(500, 3000, 120_000), simulator: growing(100, 500, 30_000) },
  },
};

/** The poll schedule of a media, for a kind that polls like another (music, made as audio, polls like video). */
export const pollOf = (media: MediaKind): JobKind['poll'] => MEDIA[media].poll;

/** A sniffed type's usual extension: its subtype, but for `jpeg` and `mpeg` (MP3). */
function extensionOf(mime: string | undefined): string | undefined {
  const subtype = mime?.split('/')[1];
  return subtype === 'jpeg' ? 'jpg' : subtype === 'mpeg' ? 'mp3' : subtype;
}

function growing(firstMs: number, maxMs: number, giveUpMs: number): PollSchedule {
  return { firstMs, maxMs, factor: 1.5, giveUpMs };
}

/** A kind from its spec: no catalogue checks and its media's poll unless it says otherwise. */
export function defineKind<T extends string>({ media, pricing, paths, body, ...spec }: KindSpec<T>): JobKind<T> {
  const { extensions, poll } = MEDIA[media];
  // The bytes' type (mime) first, then the URL's extension, when it is one this kind makes.
  const extension: KindOutput['extension'] = ({ params }, { mime, urlExtension }) => {
    const format = String(params['format']);
    const found = [extensionOf(mime), urlExtension].find((ext) => ext !== undefined && extensions.includes(ext));
    return found ?? (extensions.includes(format) ? format : (extensions[0] ?? ''));
  };
  const fields = { ...spec.content, ...spec.params };
  const files = Object.fromEntries(Object.entries(fields).flatMap(([name, { file }]) => (file ? [[name, file]] : [])));
  const sent = Object.keys(fields).filter((name) => !(name in files));
  const required = Object.keys(fields).filter((name) => !(fields[name]?.optional || spec.exactlyOne?.includes(name)));
  const uploads = Object.keys(files).filter((name) => files[name] !== 'text');
  // A text that may come from a file travels as the job's text, not among its parameters.
  const textOf = spec.textFrom;
  const sentOf: Sent = (job) => pick(textOf ? { ...job.params, [textOf.field]: job.text } : job.params, sent);
  const submit = (job: SendableJob): ServiceRequest => {
    const endpoint = paths?.submit ?? spec.type;
    const parts = mediaParts(job, uploads);
    // A kind that may send its media sends JSON without them (speech without a voice to clone).
    const json = uploads.length === 0 || (body === 'json-unless-files' && parts.length === 0);
    if (json) return { endpoint, json: sentOf(job) };
    // Multipart carries every field as text (a flag as 1 or 0: Laravel refuses "true"); the media go as file parts.
    return { endpoint, multipart: { fields: texts(sentOf(job)), files: parts } };
  };
  const priceEndpoint = paths?.price ?? `${spec.type}/price-calculation`;
  const derived = { files, pricing: pricingOf(priceEndpoint, pricing, sentOf), output: { media, extension } };
  return { checkModel: () => undefined, poll, submit, required, ...spec, ...derived };
}

type Sent = (job: SendableJob) => Record<string, unknown>;

const formText = (value: unknown): string => (typeof value === 'boolean' ? (value ? '1' : '0') : String(value));

function pricingOf(endpoint: string, spec: PricingSpec, sentOf: Sent): KindPricing {
  const keyFields = spec.keyFields;
  const keyed: Sent = (job) => pick(job.params, keyFields);
  if (spec.by === 'per-key') {
    const { body: bodyOf, carries } = spec;
    // Picked again: a field the body leaves undefined is not sent.
    const fromKey: Sent = bodyOf === undefined ? keyed : (job) => pickSet(bodyOf(keyed(job)));
    const body: Sent =
      carries === 'submit' ? sentOf : typeof carries === 'object' ? (job) => pick(sentOf(job), carries) : fromKey;
    const request = spec.multipart
      ? (job: SendableJob): ServiceRequest => ({ endpoint, multipart: { fields: texts(body(job)), files: [] } })
      : (job: SendableJob): ServiceRequest => ({ endpoint, json: body(job) });
    return { by: 'per-key', keyFields, request };
  }
  const { lengthField, laterKeyFields = [] } = spec;
  // Only the length is sent, never the text itself.
  const request = (job: SendableJob, length: number): ServiceRequest => ({
    endpoint,
    json: { ...keyed(job), ...pick(job.params, laterKeyFields), [lengthField]: length },
  });
  const lengthOf = (job: SendableJob) => job.textChars ?? 0;
  return { by: 'per-length', keyFields, laterKeyFields, lengthOf, request };
}

/** Form fields: every value as its text; a list or object as bracketed names (`loras[0][weight]`), as Laravel reads. */
const texts = (values: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).flatMap(([name, value]) => formEntries(name, value)));

function formEntries(name: string, value: unknown): [string, string][] {
  if (typeof value !== 'object' || value === null) return [[name, formText(value)]];
  return Object.entries(value).flatMap(([key, inner]) => formEntries(`${name}[${key}]`, inner));
}

/** Only the fields listed, in that order, each only if set: a request carries no stray property. */
function pick(params: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (params[field] !== undefined) picked[field] = params[field];
  return picked;
}

const pickSet = (values: Record<string, unknown>): Record<string, unknown> => pick(values, Object.keys(values));

/** Each media file a job sends, as a part with its real type: a list field's as repeated `<field>[]` parts. */
function mediaParts(job: SendableJob, fields: readonly string[]): MultipartFile[] {
  return fields.flatMap((field) => {
    const single = job.media[field];
    const refs: MediaRef[] = single === undefined ? [] : [single];
    for (let n = 0, ref = job.media[`${field}.0`]; ref !== undefined; ref = job.media[`${field}.${++n}`]) {
      refs.push(ref);
    }
    const part = single === undefined ? `${field}[]` : field;
    return refs.map(({ path, contentType }) => ({ field: part, path, contentType, filename: basename(path) }));
  });
}
