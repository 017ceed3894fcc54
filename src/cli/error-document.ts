import { isMediabatchError } from '../errors.js';
import { ManifestError, type ManifestIssue } from '../manifest/errors.js';
import { SCHEMA_VERSION, type ErrorDocument, type ProblemJson } from '../report/document-schemas.js';
import { errorJson } from '../report/documents.js';
import { INTERNAL_ERROR_EXIT, logLine, writeJsonDocument } from './output.js';

/**
 * A failure as `--json` prints it: the stable code, the message a person reads on stderr (never
 * a stack) and the exit code, so a script gets one document on stdout whatever happened. An
 * invalid manifest adds its problems, each with its place.
 */
export function errorDocument(error: unknown): ErrorDocument {
  if (error instanceof ManifestError) {
    return { schema_version: SCHEMA_VERSION, error: errorJson(error), problems: error.issues.map(problemJson) };
  }
  if (isMediabatchError(error)) return { schema_version: SCHEMA_VERSION, error: errorJson(error) };
  const detail = error instanceof Error ? error.message : String(error);
  const message = `this is a bug in mediabatch (an unexpected internal error: ${detail}); the ledger keeps what was done`;
  return { schema_version: SCHEMA_VERSION, error: { code: 'E_INTERNAL', message, exit_code: INTERNAL_ERROR_EXIT } };
}

/** One manifest problem with snake_case keys; an absent part is left out of the JSON. */
function problemJson(issue: ManifestIssue): ProblemJson {
  return {
    file: issue.file,
    line: issue.line,
    col: issue.col,
    job_index: issue.jobIndex,
    job_id: issue.jobId,
    field: issue.field,
    from_defaults: issue.fromDefaults,
    message: issue.message,
    expected: issue.expected,
    got: issue.got,
    hint: issue.hint,
  };
}

/**
 * The only place an error becomes text and an exit code: a line on stderr for the person, and
 * under --json the same message as a document on stdout for scripts.
 */
export async function reportError(error: unknown, options: { json: boolean }): Promise<number> {
  const document = errorDocument(error);
  if (error instanceof ManifestError) {
    logLine(error.message);
  } else if (isMediabatchError(error)) {
    logLine(`mediabatch: ${error.message}`);
  } else {
    logLine(error instanceof Error ? (error.stack ?? error.message) : String(error));
    logLine('mediabatch: this is a bug in mediabatch (an unexpected internal error); the ledger keeps what was done.');
  }
  if (options.json) await writeJsonDocument(document);
  return document.error.exit_code;
}
