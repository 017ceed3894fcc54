import type * as z from 'zod';
import type { Model, ServiceRequest } from '../api/types.js';

export type { MultipartFile, ServiceRequest } from '../api/types.js';
import type { MediaKind } from '../media-type.js';
import type { ResolvedJob, SendableJob } from './job.js';
import type { JobType } from './types.js';

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
export type KindPricing =
  | {
      by: 'per-key';
      /** The fields the price depends on, in the order the cache key lists them. */
      keyFields: readonly string[];
      request(job: SendableJob): ServiceRequest;
    }
  | {
      by: 'per-length';
      /** Every field the price depends on but the length. */
      keyFields: readonly string[];
      lengthOf(job: SendableJob): number;
      request(job: SendableJob, length: number): ServiceRequest;
    };

export interface KindOutput {
  /** What a result must be, by its bytes: a storage error page is never a result. */
  media: MediaKind;
  /**
   * The file extension of a result: from the type its bytes showed (mime), else the URL's
   * extension when it is one this kind produces, else the kind's default for the job.
   */
  extension(job: { params: Readonly<Record<string, unknown>> }, found: { mime?: string | undefined; urlExtension?: string | undefined }): string;
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
