/** The manifest module: YAML (and its sources) → validated, resolved jobs, read unit by unit. */
export { IssueCollector } from './issues.js';
export { duplicateIssue, movedIssue, originOf } from './ids.js';
export { unitFingerprint } from './fingerprint.js';
export { checkJobs } from './load.js';
export { readUnit } from './read.js';
export type { Manifest, ManifestUnit, ResolvedJob } from './types.js';
