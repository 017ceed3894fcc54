/**
 * The registry of job kinds: the one place that lists them. Everything else looks a kind up by
 * `job.type` (`kindOf`) or walks `JOB_KINDS`; a new kind is a module beside these and one line in
 * `KINDS` (`npm run new-kind -- NAME` writes both), and the type of its name follows.
 */
import { img2video } from './img2video.js';
import type { JobKind } from './kind.js';
import { txt2audio } from './txt2audio.js';
import { txt2img } from './txt2img.js';
import { txt2video } from './txt2video.js';
import type { JobType } from './types.js';
import { txt2embedding } from './txt2embedding.js';
import { vidUpscale } from './vid-upscale.js';
import { txt2music } from './txt2music.js';
import { img2img } from './img2img.js';

/** In the order the manifest's schema, its messages and the docs list them. */
export const KINDS = [txt2audio, img2video, txt2img, txt2video, txt2embedding, vidUpscale, txt2music, img2img] as const;

export const JOB_KINDS: readonly JobKind[] = KINDS;

export const JOB_TYPES: readonly JobType[] = KINDS.map((kind) => kind.type);

const BY_TYPE = new Map<string, JobKind>(KINDS.map((kind) => [kind.type, kind]));

export function isJobType(value: unknown): value is JobType {
  return typeof value === 'string' && BY_TYPE.has(value);
}

export function kindOf(type: JobType): JobKind {
  return BY_TYPE.get(type) as JobKind;
}

export type { JobType } from './types.js';
export { requiredFor } from './kind.js';
export type { ClassLimit, FieldSpec, JobKind, KindPricing, MediaFact, MediaField, MultipartFile, PlanName, PollSchedule, ReportProblem, ServiceRequest } from './kind.js';
export type { FieldPosition, MediaRef, ResolvedJob, SendableJob, SourcePosition } from './job.js';
