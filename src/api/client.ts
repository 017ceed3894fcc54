/**
 * The ServiceClient over undici: one keep-alive Agent for every call, a JSON or multipart body as
 * each job kind describes its request, typed errors for every failure. It knows no job kind: the
 * kinds (src/jobs) say which endpoint and which fields. It never retries: retrying is the
 * caller's decision through retry.ts, the one retry layer.
 */
import { readFile } from 'node:fs/promises';
import { Agent, FormData } from 'undici';
import { LocalIoError } from '../errors.js';
import { parseBaseUrl } from './base-url.js';
import { ResponseShapeError } from './errors.js';
import { downloadResult } from './download.js';
import { callApi, type ApiCall, type HttpContext } from './http.js';
import { balanceAnswer, modelsPage, priceAnswer, requestIdAnswer, statusAnswer } from './schemas.js';
import type { z } from 'zod';
import type { CallOptions, Model, MultipartFile, ServiceClient, ServiceRequest } from './types.js';
import { systemClock, type Clock } from '../clock.js';

/** How long an API call may wait for its answer (headers, then each piece of the body). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** The same for multipart submits, which upload files (images) first. */
export const DEFAULT_UPLOAD_TIMEOUT_MS = 300_000;

/** A client's settings but its address and token; each timeout covers the headers and each piece of the body. */
const DEFAULTS = {
  /** Keep-alive connections per origin. */
  connections: 16,
  connectTimeoutMs: 10_000,
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  uploadTimeoutMs: DEFAULT_UPLOAD_TIMEOUT_MS,
  /** Of result downloads. */
  downloadTimeoutMs: 300_000,
  userAgent: 'mediabatch',
  /** Where the daily reset's distance is counted from. */
  clock: systemClock as Clock,
};

export type ServiceClientOptions = { baseUrl: string; token: string } & {
  [setting in keyof typeof DEFAULTS]?: (typeof DEFAULTS)[setting] | undefined;
};

const API = '/api/v1/client';
const MODELS_PAGE_SIZE = 50;
/** A models endpoint still paging after this many pages is broken, not big. */
const MAX_MODEL_PAGES = 200;

async function fileBlob(file: MultipartFile): Promise<Blob> {
  try {
    return new Blob([await readFile(file.path)], { type: file.contentType });
  } catch (error) {
    // Thrown before anything is sent: submitFailureKind counts it as nothing charged.
    const message = `cannot read image ${file.path}: ${(error as Error).message}; check the file`;
    throw new LocalIoError(message, 'E_IMAGE_READ', error);
  }
}

/** A multipart body: the fields as text, the files as real file parts. */
async function multipartForm(body: { fields: Record<string, string>; files: MultipartFile[] }): Promise<FormData> {
  const form = new FormData();
  for (const [name, value] of Object.entries(body.fields)) form.append(name, value);
  for (const file of body.files) form.append(file.field, await fileBlob(file), file.filename);
  return form;
}

/** Builds a client; `close()` ends its keep-alive connections (tests and the CLI must call it). */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const { origin, basePath } = parseBaseUrl(options.baseUrl);
  const given = Object.entries(options).filter(([, value]) => value !== undefined);
  const settings: typeof DEFAULTS = { ...DEFAULTS, ...Object.fromEntries(given) };
  const { connectTimeoutMs, requestTimeoutMs, uploadTimeoutMs, userAgent, clock } = settings;
  const dispatcher = new Agent({ connections: settings.connections, connect: { timeout: connectTimeoutMs } });
  const http: HttpContext = { dispatcher, origin, basePath, token: options.token, userAgent, connectTimeoutMs, clock };
  const downloads = { dispatcher, userAgent, timeoutMs: settings.downloadTimeoutMs, clock };

  const get = <S extends z.ZodType>(schema: S, path: string, signal?: AbortSignal, query?: ApiCall['query']) =>
    callApi(http, { method: 'GET', path: `${API}${path}`, query, timeoutMs: requestTimeoutMs, signal }, schema);

  /** A job endpoint's request as the wire carries it; a multipart one uploads files, so may take longer. */
  async function post<S extends z.ZodType>(schema: S, request: ServiceRequest, signal: AbortSignal | undefined) {
    const { redact } = request;
    const body =
      'json' in request
        ? { json: request.json, timeoutMs: requestTimeoutMs }
        : { form: await multipartForm(request.multipart), timeoutMs: uploadTimeoutMs };
    return callApi(http, { method: 'POST', path: `${API}/${request.endpoint}`, ...body, redact, signal }, schema);
  }

  async function listModels(call: CallOptions & { types: readonly string[] }): Promise<Model[]> {
    const models: Model[] = [];
    for (let page = 1; page <= MAX_MODEL_PAGES; page++) {
      const types = call.types.join(',');
      const query = { limit: String(MODELS_PAGE_SIZE), page: String(page), 'filter[inference_types]': types };
      const { value } = await get(modelsPage, '/models', call.signal, query);
      models.push(...value.data);
      // An empty page also ends the walk: a server that miscounts must not make us spin.
      if (page >= value.meta.last_page || value.data.length === 0) return models;
    }
    const issues = `still paging after ${MAX_MODEL_PAGES} pages of models`;
    throw new ResponseShapeError({ method: 'GET', path: `${basePath}${API}/models`, requestSent: true, issues });
  }

  return {
    listModels,
    async submit(request, call = {}) {
      const { value, rateLimit } = await post(requestIdAnswer, request, call.signal);
      return { value: { requestId: value.data.request_id }, rateLimit };
    },
    async price(request, call = {}) {
      const { value, rateLimit } = await post(priceAnswer, request, call.signal);
      return { value: { priceUsd: value.data.price }, rateLimit };
    },
    async requestStatus(requestId, call = {}) {
      const path = `/request-status/${encodeURIComponent(requestId)}`;
      const { value, rateLimit } = await get(statusAnswer, path, call.signal);
      return { value: value.data, rateLimit };
    },
    async balance(call = {}) {
      const { value } = await get(balanceAnswer, '/balance', call.signal);
      return { balanceUsd: value.data.balance };
    },
    download: (url, destPath, call) => downloadResult(downloads, url, destPath, call),
    // Idempotent: the CLI's shutdown path and a finally block may both close it.
    async close() {
      if (!dispatcher.closed && !dispatcher.destroyed) await dispatcher.close();
    },
  };
}
