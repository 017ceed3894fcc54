import { ExitCode, MediabatchError } from '../errors.js';

/** Thrown inside a submit when the run stops between two attempts: the job was provably not taken. */
export class SubmitAbandoned extends Error {
  constructor(reason: string) {
    super(`not sent: ${reason}`);
    this.name = 'SubmitAbandoned';
  }
}

/** An error that ends the whole run (bad token, balance, disk full); it keeps the original as cause. */
export class FatalRunError extends MediabatchError {
  constructor(cause: unknown) {
    const inner = cause instanceof MediabatchError ? cause : undefined;
    super(inner?.message ?? describeError(cause), {
      code: inner?.code ?? 'E_FATAL',
      exitCode: inner?.exitCode ?? ExitCode.auth,
      cause,
    });
  }
}

/** Budget refusal before anything is sent (exit 3). */
export class BudgetError extends MediabatchError {
  constructor(message: string) {
    super(message, { code: 'E_BUDGET', exitCode: ExitCode.budget });
  }
}

/** One line for a ledger's last_error or a progress message; never includes a token. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
