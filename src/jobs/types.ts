import type { KINDS } from './index.js';

/** The kinds of job mediabatch runs, named as the service names its endpoints: the registry's list (jobs/index.ts). */
export type JobType = (typeof KINDS)[number]['type'];
