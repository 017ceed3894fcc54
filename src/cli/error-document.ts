import { isMediabatchError } from '../errors.js';
import { ManifestError, type ManifestIssue } from '../manifest/errors.js';

/** The exit code of an unexpected internal error: a bug, reported with its stack on stderr. */
export const INTERNAL_ERROR_EXIT = 70;

export interface ErrorDocument {
  schema_version: 1;
  error: { code: string; message: string; exit_code: number };
  /** An invalid manifest's problems, each with its place, for scripts. */
  problems?: ManifestIssue[];
}

/**
 * A failure as `--json` prints it: the stable code, the message a person reads on stderr (never
 * a stack) and the exit code, so a script gets one document on stdout whatever happened.
 */
export function errorDocument(error: unknown): ErrorDocument {
  if (error instanceof ManifestError) {
    return { schema_version: 1, error: { code: error.code, message: error.message, exit_code: error.exitCode }, problems: error.issues };
  }
  if (isMediabatchError(error)) {
    return { schema_version: 1, error: { code: error.code, message: error.message, exit_code: error.exitCode } };
  }
  const detail = error instanceof Error ? error.message : String(error);
  const message = `this is a bug in mediabatch (an unexpected internal error: ${detail}); the ledger keeps what was done`;
  return { schema_version: 1, error: { code: 'E_INTERNAL', message, exit_code: INTERNAL_ERROR_EXIT } };
}
