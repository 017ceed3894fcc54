/**
 * The registry of job kinds: the one place that lists them. Everything else looks a kind up by
 * `job.type` (`kindOf`) or walks `JOB_KINDS`; a new kind is a module beside these and one line
 * here (and its name in types.ts), checked complete by the compiler.
 */
import { img2video } from './img2video.js';
import type { JobKind } from './kind.js';
import { txt2audio } from './txt2audio.js';
import { txt2img } from './txt2img.js';
import { txt2video } from './txt2video.js';
import { JOB_TYPES, type JobType } from './types.js';

const KINDS = { txt2audio, img2video, txt2img, txt2video } satisfies Record<JobType, JobKind>;

/** In the order the type list gives them. */
export const JOB_KINDS: readonly JobKind[] = JOB_TYPES.map((type) => KINDS[type]);

export function kindOf(type: JobType): JobKind {
  return KINDS[type];
}

export { JOB_TYPES, isJobType, type JobType } from './types.js';
export type { ClassLimit, FieldSpec, JobKind, KindPricing, MultipartFile, PlanName, PollSchedule, ReportProblem, ServiceRequest } from './kind.js';
export type { FieldPosition, ImageRef, ResolvedJob, SendableJob, SourcePosition } from './job.js';
