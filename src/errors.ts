/**
 * The error base class and the exit codes (README.md, "Exit codes"). Every expected failure is a
 * MediabatchError subclass carrying a stable `code` and the exit code it maps to; only
 * `cli/` turns one into text and a process exit. Anything else reaching the top is a bug.
 */

export const ExitCode = {
  ok: 0,
  /** The run ended but some jobs failed, are in doubt or still running. */
  incomplete: 1,
  /** Usage error or invalid manifest: nothing was sent. */
  usage: 2,
  /** The budget would be exceeded: nothing beyond it was sent. */
  budget: 3,
  /** Authentication, permission, balance or configuration error. */
  auth: 4,
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class MediabatchError extends Error {
  readonly code: string;
  readonly exitCode: ExitCodeValue;

  constructor(message: string, options: { code: string; exitCode: ExitCodeValue; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.exitCode = options.exitCode;
  }
}

/** A command line that cannot be acted on: bad flag value, missing file, bad token file. */
export class UsageError extends MediabatchError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'E_USAGE', exitCode: ExitCode.usage, cause });
  }
}

/** A setting or environment that stops the tool before any work: no token, locked ledger. */
export class ConfigError extends MediabatchError {
  constructor(message: string, code = 'E_CONFIG', cause?: unknown) {
    super(message, { code, exitCode: ExitCode.auth, cause });
  }
}

/** A local I/O failure the user must fix: ledger unreadable, output folder not writable, disk full. */
export class LocalIoError extends MediabatchError {
  constructor(message: string, code = 'E_IO', cause?: unknown) {
    super(message, { code, exitCode: ExitCode.auth, cause });
  }
}

export function isMediabatchError(error: unknown): error is MediabatchError {
  return error instanceof MediabatchError;
}
