/**
 * The shapes the runner sees from the service client. Field names follow the service
 * (snake_case on the wire) only inside api/; everything exported here is camelCase.
 */

export type JobType = 'txt2audio' | 'img2video';

/** Endpoint classes that share one rate-limit counter at the service (API.md, "Rate limits"). */
export type EndpointClass = 'submit:txt2audio' | 'submit:img2video' | 'price' | 'status' | 'unlimited';

/** Rate-limit headers as read off one response; every field optional, as the service sends them. */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  dailyLimit?: number;
  dailyRemaining?: number;
}

export interface ModelLimits {
  [key: string]: number | undefined;
}

export interface Voice {
  slug: string;
  name: string;
  gender?: string | undefined;
}

export interface Language {
  slug: string;
  name: string;
  voices: Voice[];
}

export interface Model {
  slug: string;
  name: string;
  inferenceTypes: string[];
  /** `info.limits`, e.g. min_speed, max_speed, min_text, max_text, min_width, max_frames … */
  limits: ModelLimits;
  /** `info.features`, e.g. supports_last_frame. */
  features: Record<string, unknown>;
  defaults: Record<string, unknown>;
  languages: Language[];
  status?: string | undefined;
}

export interface Txt2AudioParams {
  model: string;
  voice: string;
  lang: string;
  speed: number;
  format: string;
  sample_rate: number;
}

export interface Txt2AudioSubmit extends Txt2AudioParams {
  text: string;
}

export interface Txt2AudioPriceQuery extends Txt2AudioParams {
  count_text: number;
}

export interface Img2VideoPriceQuery {
  model: string;
  width: number;
  height: number;
  steps: number;
  frames: number;
  fps: number;
}

export interface ImageFile {
  /** Absolute path on disk; the client streams or reads it into a multipart file part. */
  path: string;
  /** e.g. image/png, decided from the bytes by manifest/. */
  contentType: string;
  filename: string;
}

export interface Img2VideoSubmit extends Img2VideoPriceQuery {
  prompt: string;
  negative_prompt?: string | undefined;
  guidance: number;
  seed: number;
  first_frame_image: ImageFile;
  last_frame_image?: ImageFile | undefined;
}

export type RemoteStatus = 'pending' | 'processing' | 'done' | 'error' | 'unknown';

export interface RequestStatus {
  /** Any status value the client does not know becomes 'unknown' (treated as still running). */
  status: RemoteStatus;
  rawStatus: string;
  progress?: number | undefined;
  resultUrl?: string | undefined;
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
  errorReason?: string | undefined;
  retryable?: boolean | undefined;
  refunded?: boolean | undefined;
}

export interface WithRateLimit<T> {
  value: T;
  rateLimit: RateLimitInfo;
}

export interface DownloadResult {
  bytes: number;
  sha256: string;
  contentType?: string | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** The typed client over the real service (or anything that speaks its API). */
export interface ServiceClient {
  /** Every model, walking all pages with limit=50 until meta.last_page. */
  listModels(options?: CallOptions & { types?: JobType[] }): Promise<Model[]>;
  submitTxt2Audio(job: Txt2AudioSubmit, options?: CallOptions): Promise<WithRateLimit<{ requestId: string }>>;
  priceTxt2Audio(query: Txt2AudioPriceQuery, options?: CallOptions): Promise<WithRateLimit<{ priceUsd: number }>>;
  submitImg2Video(job: Img2VideoSubmit, options?: CallOptions): Promise<WithRateLimit<{ requestId: string }>>;
  priceImg2Video(query: Img2VideoPriceQuery, options?: CallOptions): Promise<WithRateLimit<{ priceUsd: number }>>;
  requestStatus(requestId: string, options?: CallOptions): Promise<WithRateLimit<RequestStatus>>;
  balance(options?: CallOptions): Promise<{ balanceUsd: number }>;
  /**
   * Streams a result URL to `destPath` without the Authorization header. Refuses non-http(s)
   * URLs, redirects to plain http on another origin or to other schemes, and bodies over
   * `maxBytes` (the partial file is removed).
   */
  download(url: string, destPath: string, options: CallOptions & { maxBytes: number }): Promise<DownloadResult>;
  close(): Promise<void>;
}
