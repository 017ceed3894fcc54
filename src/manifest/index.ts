/** The manifest module: YAML → validated, resolved jobs, and the catalogue checks on them. */
export { checkAgainstCatalogue } from './catalogue.js';
export { formatIssue, ManifestError, type ManifestIssue } from './errors.js';
export { loadManifest } from './load.js';
export { manifestJsonSchema, SCHEMA_FILE } from './schema.js';
export type * from './types.js';
