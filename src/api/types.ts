/**
 * The shapes the runner sees from the service client. Field names follow the service
 * (snake_case on the wire) only inside api/; everything exported here is camelCase.
 */
import type { RateLimitInfo } from './error-mapping.js';
import type { Model } from './schemas.js';

export type { Model, RateLimitInfo };

export interface RequestStatus {
  /** Any status value the client does not know becomes 'unknown' (treated as still running). */
  status: 'pending' | 'processing' | 'done' | 'error' | 'unknown';
  rawStatus: string;
  progress?: number | undefined;
  resultUrl?: string | undefined;
  /** A text or embedding result given in the status itself (`result`), as JSON text when it came as JSON. */
  result?: string | undefined;
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
  errorReason?: string | undefined;
  retryable?: boolean | undefined;
  refunded?: boolean | undefined;
}

/**
 * One request to a job endpoint of the service (a path under /api/v1/client, e.g. `<kind>` or
 * `<kind>/price-calculation`): a JSON body, or multipart fields with file parts, which the
 * client reads from disk and attaches. Job kinds describe their requests in this shape.
 */
export type ServiceRequest = (
  | { endpoint: string; json: Record<string, unknown> }
  | { endpoint: string; multipart: { fields: Record<string, string>; files: MultipartFile[] } }
) & {
  /** Values it carries that no error text may repeat (a webhook secret), blanked as the token is. */
  redact?: readonly string[] | undefined;
};

export interface MultipartFile {
  field: string;
  /** Absolute path on disk. */
  path: string;
  contentType: string;
  filename: string;
}

export type WithRateLimit<T> = { value: T; rateLimit: RateLimitInfo };

export type DownloadResult = { bytes: number; sha256: string; contentType?: string | undefined };

export type CallOptions = { signal?: AbortSignal | undefined };

/** The typed client over the real service (or anything that speaks its API). */
export interface ServiceClient {
  /** Every model of these inference types, walking all pages with limit=50 until meta.last_page. */
  listModels(options: CallOptions & { types: readonly string[] }): Promise<Model[]>;
  /** A generation request (a kind's `submit`): the service's request id. */
  submit(request: ServiceRequest, options?: CallOptions): Promise<WithRateLimit<{ requestId: string }>>;
  /** A price request (a kind's price request): the price in USD, as the service answers it. */
  price(request: ServiceRequest, options?: CallOptions): Promise<WithRateLimit<{ priceUsd: number }>>;
  requestStatus(requestId: string, options?: CallOptions): Promise<WithRateLimit<RequestStatus>>;
  balance(options?: CallOptions): Promise<{ balanceUsd: number }>;
  /** Streams a result URL to `destPath` without the Authorization header (download.ts says what it refuses). */
  download(url: string, destPath: string, options: CallOptions & { maxBytes: number }): Promise<DownloadResult>;
  close(): Promise<void>;
}
