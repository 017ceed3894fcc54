/**
 * The kinds of job mediabatch runs, named as the service names its endpoints. The list is the
 * registry's key set (jobs/index.ts): a kind is added here and in one module of its own.
 */
export const JOB_TYPES = ['txt2audio', 'img2video', 'txt2img', 'txt2video'] as const;

export type JobType = (typeof JOB_TYPES)[number];

export function isJobType(value: unknown): value is JobType {
  return (JOB_TYPES as readonly unknown[]).includes(value);
}
