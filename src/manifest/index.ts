/** The manifest module: YAML (and its sources) → validated, resolved jobs, read unit by unit. */
export { catalogueIssues } from './catalogue.js';
export { formatIssue, ManifestError, type ManifestIssue } from './errors.js';
export { IssueCollector } from './issues.js';
export { duplicateIssue, movedIssue, originOf } from './ids.js';
export { unitFingerprint } from './fingerprint.js';
export { checkJobs, loadManifest } from './load.js';
export { openManifest, type LoadOptions } from './open.js';
export { readUnit, type UnitBatch } from './read.js';
export { manifestJsonSchema, SCHEMA_FILE } from './schema.js';
export type * from './types.js';
