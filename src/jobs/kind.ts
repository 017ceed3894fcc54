import type * as z from 'zod';
import type { Model, ServiceRequest } from '../api/types.js';
import type { MediaKind } from '../media-type.js';
import type { ResolvedJob, SendableJob } from './job.js';
import { extensionFrom } from './model-checks.js';
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
  files: Readonly<Record<string, 'text' | 'image'>>;
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
  /** Submits allowed by each plan (the service counts each kind's submits apart). */
  plans: Readonly<Record<PlanName, ClassLimit>>;
}

export interface FieldSpec {
  schema: z.ZodType;
  /** What a message says was expected: "a whole number above 0". */
  expected: string;
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

type Defaulted = 'files' | 'checkModel' | 'poll' | 'output';

/** What a kind's module writes: its data and its rules; what its media decides is filled in. */
export type KindSpec<T extends string> = Omit<JobKind<T>, Defaulted> &
  Partial<Pick<JobKind<T>, Exclude<Defaulted, 'output'>>> & { media: MediaKind };

/**
 * By media: the extensions a result may have (the first is the default, unless a job's `format`
 * names another) and the poll schedule. The service's clients poll images from about 2 s, video
 * from about 5 s up to 30 s (giving up after 5–15 min), speech from about 1–2 s up to 5–10 s.
 */
const MEDIA: Readonly<Record<MediaKind, { extensions: readonly string[]; poll: JobKind['poll'] }>> = {
  image: {
    extensions: ['png', 'jpg', 'webp'],
    poll: {
      service: { firstMs: 2000, maxMs: 10_000, factor: 1.5, giveUpMs: 10 * 60_000 },
      simulator: { firstMs: 150, maxMs: 1000, factor: 1.5, giveUpMs: 60_000 },
    },
  },
  video: {
    extensions: ['mp4', 'webm', 'mov', 'gif'],
    poll: {
      service: { firstMs: 5000, maxMs: 30_000, factor: 1.5, giveUpMs: 15 * 60_000 },
      simulator: { firstMs: 300, maxMs: 2000, factor: 1.5, giveUpMs: 120_000 },
    },
  },
  audio: {
    extensions: ['mp3', 'wav', 'flac', 'ogg', 'opus', 'aac', 'm4a'],
    poll: {
      service: { firstMs: 1500, maxMs: 8000, factor: 1.5, giveUpMs: 10 * 60_000 },
      simulator: { firstMs: 150, maxMs: 1000, factor: 1.5, giveUpMs: 60_000 },
    },
  },
};

/** A kind from its spec: no files, no catalogue checks and its media's poll unless it says otherwise. */
export function defineKind<T extends string>({ media, ...spec }: KindSpec<T>): JobKind<T> {
  const { extensions, poll } = MEDIA[media];
  const extension: KindOutput['extension'] = (job, found) => {
    const format = String(job.params['format']);
    return extensionFrom(found, extensions, extensions.includes(format) ? format : (extensions[0] ?? ''));
  };
  return { files: {}, checkModel: () => undefined, poll, ...spec, output: { media, extension } };
}
