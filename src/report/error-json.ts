import type { MediabatchError } from '../errors.js';
import type { ErrorJson } from './document-schemas.js';

/** An expected failure as documents carry it: its stable code, the message people read, the exit code. */
export function errorJson(error: MediabatchError): ErrorJson {
  return { code: error.code, message: error.message, exit_code: error.exitCode };
}
