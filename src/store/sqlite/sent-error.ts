import { ConfigError, LocalIoError, UsageError } from '../../errors.js';

/**
 * An error in a shape that crosses a thread boundary (structured clone keeps neither a class nor
 * a `code`). The classes a person acts on are named and rebuilt as themselves, code and cause
 * included; anything else (a bug) comes back as an Error with its message and the stack of the
 * thread where it happened.
 */
export interface SentError {
  name: string;
  message: string;
  code?: string | undefined;
  stack?: string | undefined;
  cause?: SentError | undefined;
}

const REBUILT: Record<string, (message: string, code: string | undefined, cause: unknown) => Error> = {
  LocalIoError: (message, code, cause) => new LocalIoError(message, code, cause),
  ConfigError: (message, code, cause) => new ConfigError(message, code, cause),
  UsageError: (message, _code, cause) => new UsageError(message, cause),
};

export function toSentError(error: unknown, depth = 0): SentError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  const cause = depth < 3 && error.cause !== undefined ? toSentError(error.cause, depth + 1) : undefined;
  return { name: error.name, message: error.message, code: typeof code === 'string' ? code : undefined, stack: error.stack, cause };
}

export function fromSentError(sent: SentError): Error {
  const cause = sent.cause === undefined ? undefined : fromSentError(sent.cause);
  const rebuild = Object.hasOwn(REBUILT, sent.name) ? REBUILT[sent.name] : undefined;
  if (rebuild !== undefined) return rebuild(sent.message, sent.code, cause);
  const error = new Error(sent.message, cause === undefined ? undefined : { cause });
  if (sent.name !== 'Error') error.name = sent.name;
  if (sent.code !== undefined) Object.assign(error, { code: sent.code });
  if (sent.stack !== undefined) error.stack = sent.stack;
  return error;
}
