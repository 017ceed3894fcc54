/**
 * The registry of job kinds: the one place that lists them. Everything else looks a kind up by
 * `job.type` (`kindOf`) or walks `JOB_KINDS`; a new kind is a module beside these and one line in
 * `KINDS` (`npm run new-kind -- NAME` writes both), and the type of its name follows.
 */
import { img2video } from './img2video.js';
import type { Model } from '../api/types.js';
import type { JobKind } from './kind.js';
import { txt2audio } from './txt2audio.js';
import { txt2img } from './txt2img.js';
import { txt2video } from './txt2video.js';
import type { JobType } from './types.js';
import { txt2embedding } from './txt2embedding.js';
import { vidUpscale } from './vid-upscale.js';
import { imgRmbg } from './img-rmbg.js';
import { imgUpscale } from './img-upscale.js';
import { img2txt } from './img2txt.js';
import { vidRmbg } from './vid-rmbg.js';
import { videoReplace } from './video-replace.js';
import { aud2video } from './aud2video.js';
import { transcribe } from './transcribe.js';
import { aud2txt } from './aud2txt.js';
import { vid2txt } from './vid2txt.js';
import { audiofile2txt } from './audiofile2txt.js';
import { videofile2txt } from './videofile2txt.js';
import { txt2music } from './txt2music.js';
import { img2img } from './img2img.js';

/** In the order the manifest's schema, its messages and the docs list them. */
export const KINDS = [
  txt2audio,
  img2video,
  txt2img,
  txt2video,
  txt2embedding,
  vidUpscale,
  imgRmbg,
  imgUpscale,
  img2txt,
  vidRmbg,
  videoReplace,
  aud2video,
  transcribe,
  aud2txt,
  vid2txt,
  audiofile2txt,
  videofile2txt,
  txt2music,
  img2img,
] as const;

export const JOB_KINDS: readonly JobKind[] = KINDS;

export const JOB_TYPES: readonly JobType[] = KINDS.map((kind) => kind.type);

const BY_TYPE = new Map<string, JobKind>(KINDS.map((kind) => [kind.type, kind]));

export function isJobType(value: unknown): value is JobType {
  return typeof value === 'string' && BY_TYPE.has(value);
}

export function kindOf(type: JobType): JobKind {
  return BY_TYPE.get(type) as JobKind;
}

/** The `inference_types` the catalogue lists these kinds' models under (the models walk filters by them). */
export const catalogueTypesOf = (types: readonly JobType[]): string[] => [
  ...new Set(types.flatMap((type) => kindOf(type).catalogueTypes ?? [type])),
];

/** Whether a model of the catalogue serves a kind. */
export const serves = (model: Pick<Model, 'inferenceTypes'>, type: JobType): boolean =>
  catalogueTypesOf([type]).some((name) => model.inferenceTypes.includes(name));

export { factOf } from './kind.js';
export type { JobType } from './types.js';
export { requiredFor } from './kind.js';
export type { ClassLimit, FieldSpec, JobKind, KindPricing, MediaFact, MediaField, MultipartFile, PlanName, PollSchedule, ReportProblem, ServiceRequest } from './kind.js';
export type { FieldPosition, MediaRef, ResolvedJob, SendableJob, SourcePosition } from './job.js';
