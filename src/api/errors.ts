/**
 * Typed errors of the service client. Every failure of a call becomes one ApiError subclass
 * carrying what the runner's money rules need: the endpoint, the HTTP status, whether the
 * request may have reached the service, and how long the service asked us to wait.
 * Messages are one line: endpoint, what happened, what to do. They never hold the token or
 * a query string (result URLs are pre-signed: their query is a credential).
 */
import { ExitCode, LocalIoError, MediabatchError, type ExitCodeValue } from '../errors.js';
import type { RateLimitInfo } from './error-mapping.js';

export interface ApiErrorDetails {
  method: string;
  /** Path without query string. */
  path: string;
  status?: number | undefined;
  /** false only when the request provably never left this process (see NetworkError). */
  requestSent: boolean;
  retryAfterMs?: number | undefined;
  rateLimit?: RateLimitInfo | undefined;
  cause?: unknown;
}

type SaidDetails = ApiErrorDetails & { serviceMessage?: string | undefined };

/** How an error status reads: `HTTP <status> <what> ("<what the service said>"); <todo>`. */
const answered = ({ status, serviceMessage: said }: SaidDetails, what: string, todo: string): string =>
  `HTTP ${status ?? '?'} ${what}${said ? ` ("${said}")` : ''}; ${todo}`;

const sentText = (requestSent: boolean): string =>
  requestSent ? 'the request may have reached the service' : 'the request was not sent';

/** Every message starts with the endpoint: `POST /api/v1/client/<kind>: …`. */
export class ApiError extends MediabatchError {
  declare readonly method: string;
  declare readonly path: string;
  declare readonly status: number | undefined;
  declare readonly requestSent: boolean;
  declare readonly retryAfterMs: number | undefined;
  declare readonly rateLimit: RateLimitInfo | undefined;

  /** Every field of `details` but `cause` becomes the error's own, so a subclass only declares its own. */
  constructor(what: string, details: ApiErrorDetails, code: string, exitCode: ExitCodeValue = ExitCode.incomplete) {
    const { cause, ...fields } = details;
    super(`${details.method} ${details.path}: ${what}`, { code, exitCode, cause });
    Object.assign(this, fields);
  }
}

/** 401/403: the token is wrong or the account may not do this; the whole run stops (exit 4). */
export class AuthError extends ApiError {
  constructor(details: SaidDetails) {
    const what = details.status === 403 ? 'permission denied (account suspended or not permitted)' : 'not authenticated';
    super(answered(details, what, 'check MEDIABATCH_TOKEN or --token-file'), details, 'E_API_AUTH', ExitCode.auth);
  }
}

/** 422: the service refused the fields. A low balance also arrives this way and stops the run. */
export class ValidationError extends ApiError {
  declare readonly fieldErrors: Record<string, string[]>;
  declare readonly isBalance: boolean;

  constructor(details: SaidDetails & { fieldErrors: Record<string, string[]> }) {
    const fields = Object.entries(details.fieldErrors).map(([field, messages]) => `${field}: ${messages.join(' ')}`);
    const isBalance = Object.hasOwn(details.fieldErrors, 'balance') || /balance/i.test(details.serviceMessage ?? '');
    const text = fields.length > 0 ? fields.join('; ') : (details.serviceMessage ?? 'no details given');
    const todo = isBalance ? 'top up the account balance, then run again to resume' : 'fix these fields of the job';
    const code = isBalance ? 'E_API_BALANCE' : 'E_API_VALIDATION';
    super(`HTTP 422 refused: ${text}; ${todo}`, details, code, isBalance ? ExitCode.auth : ExitCode.incomplete);
    this.isBalance = isBalance;
  }
}

export type RateLimitType = 'minute' | 'daily';

/** 429: nothing was taken; `retryAfterMs` is always set (Retry-After, else the window's reset). */
export class RateLimitError extends ApiError {
  declare readonly limitType: RateLimitType | undefined;

  constructor(details: ApiErrorDetails & { limitType: RateLimitType | undefined }) {
    const window = details.limitType === 'daily' ? 'daily limit reached' : 'rate limited';
    const seconds = Math.ceil((details.retryAfterMs ?? 0) / 1000);
    super(`HTTP 429 ${window}; retry in ${seconds} s or pace requests with --plan`, details, 'E_API_RATE_LIMIT');
  }
}

/** 404: unknown request id or route. */
export class NotFoundError extends ApiError {
  constructor(details: SaidDetails) {
    super(answered(details, 'not found', 'check --base-url and the request id'), details, 'E_API_NOT_FOUND');
  }
}

/** Any other 4xx (400, 405, 413 body too large, …): the service refused the request as sent. */
export class ClientError extends ApiError {
  constructor(details: SaidDetails) {
    const what = details.status === 413 ? 'request too large (the service takes at most 75 MB)' : 'refused';
    super(answered(details, what, 'fix the request, it will not be retried'), details, 'E_API_CLIENT');
  }
}

/** 5xx. The body may be a gateway's HTML page: `snippet` keeps a short text version of it. */
export class ServerError extends ApiError {
  declare readonly snippet: string;

  constructor(details: ApiErrorDetails & { snippet: string }) {
    const todo = 'the service failed, try again later';
    super(answered({ ...details, serviceMessage: details.snippet }, 'server error', todo), details, 'E_API_SERVER');
  }
}

type NetworkDetails = ApiErrorDetails & { networkCode: string | undefined };

/**
 * The connection failed. `requestSent` is false only for failures before any byte of the
 * request could be written (DNS failure, connection refused or unreachable, connect timeout,
 * abort before dispatch); a failure on a connection that was up may have delivered the request.
 */
export class NetworkError extends ApiError {
  /** The undici or system error code, e.g. ECONNREFUSED, UND_ERR_SOCKET. */
  declare readonly networkCode: string | undefined;

  constructor(
    details: NetworkDetails & { detail?: string },
    what = `network error ${details.networkCode ?? ''} (${details.detail}); ${sentText(details.requestSent)}; ` +
      'check the connection and --base-url',
    code = 'E_API_NETWORK',
    exitCode: ExitCodeValue = ExitCode.incomplete,
  ) {
    super(what, details, code, exitCode);
  }
}

/**
 * The service could not be reached at all: refused, no such host, no route, a TLS handshake that
 * failed, or no connection in time. Nothing was sent. Retried like any connection that never
 * opened; once the retries are used up, it is the machine or the configuration that is wrong,
 * not a job: exit 4, naming the host and what to check.
 */
export class UnreachableError extends NetworkError {
  /** `api.deapi.ai:443`. */
  declare readonly host: string;

  constructor(details: Omit<NetworkDetails, 'requestSent'> & { host: string; reason: string }) {
    const todo = 'check --base-url / MEDIABATCH_BASE_URL and your network; the request was not sent';
    const what = `cannot reach ${details.host} (${details.reason}): ${todo}`;
    super({ ...details, requestSent: false }, what, 'E_CONNECT', ExitCode.auth);
  }
}

export type TimeoutPhase = 'connect' | 'headers' | 'body';

const PHASE_TEXT: Record<TimeoutPhase, string> = {
  connect: 'connecting',
  headers: 'waiting for the answer',
  body: 'reading the answer',
};

/** No answer in time. Only a connect timeout proves the request was not sent. */
export class TimeoutError extends NetworkError {
  declare readonly phase: TimeoutPhase;

  constructor(details: NetworkDetails & { phase: TimeoutPhase; timeoutMs?: number | undefined }) {
    const limit = details.timeoutMs === undefined ? '' : ` after ${details.timeoutMs} ms`;
    const todo = 'check the connection and --base-url, then try again later';
    const what = `timed out ${PHASE_TEXT[details.phase]}${limit}; ${sentText(details.requestSent)}; ${todo}`;
    super(details, what, 'E_API_TIMEOUT');
  }
}

/** A 2xx whose body is not what the service documents. */
export class ResponseShapeError extends ApiError {
  declare readonly issues: string;

  constructor(details: ApiErrorDetails & { issues: string }) {
    const todo = 'check --base-url points at the service';
    super(`unexpected answer from the service (${details.issues}); ${todo}`, details, 'E_API_SHAPE');
  }
}

/** A result URL this client refuses to fetch: not http(s), redirected elsewhere, or too large. */
export class ResultUrlError extends ApiError {
  declare readonly reason: 'scheme' | 'redirect' | 'too-large';

  constructor(details: ApiErrorDetails & { reason: ResultUrlError['reason']; detail: string }) {
    super(`result refused: ${details.detail}`, details, 'E_RESULT_URL');
  }
}

/** 403/404 on a pre-signed result URL: it expired; ask request-status for a fresh one. */
export class ResultUrlExpiredError extends ApiError {
  constructor(details: ApiErrorDetails) {
    const todo = 'fetch the request status again for a fresh URL';
    const what = `HTTP ${details.status ?? '?'} on the result URL, it has probably expired; ${todo}`;
    super(what, details, 'E_RESULT_URL_EXPIRED');
  }
}

/**
 * What a failed SUBMIT means for money (docs/states-and-money.md):
 * - 'not-taken': provably not taken (429, 503, not sent at all): safe to send again;
 * - 'fatal': stop the whole run (auth, low balance);
 * - 'refused': the service definitely rejected this job and charged nothing (other 4xx);
 * - 'unknown': it may have been taken (5xx, timeouts after sending, resets, odd answers,
 *   anything unrecognised): the job becomes in_doubt and is never sent again automatically.
 * A LocalIoError (an image that could not be read) happens before sending: 'refused'.
 */
export function submitFailureKind(error: unknown): 'not-taken' | 'refused' | 'unknown' | 'fatal' {
  if (error instanceof LocalIoError) return 'refused';
  if (error instanceof AuthError) return 'fatal';
  if (error instanceof ValidationError) return error.isBalance ? 'fatal' : 'refused';
  if (error instanceof RateLimitError) return 'not-taken';
  if (error instanceof NetworkError) return error.requestSent ? 'unknown' : 'not-taken';
  if (error instanceof ServerError) return error.status === 503 ? 'not-taken' : 'unknown';
  if (error instanceof NotFoundError || error instanceof ClientError) return 'refused';
  return 'unknown';
}
