/**
 * The ServiceClient over undici: one keep-alive Agent for every call, JSON for speech and
 * price calls, multipart for video submits, typed errors for every failure. It never retries:
 * retrying is the caller's decision through retry.ts, the one retry layer.
 */
import { readFile } from 'node:fs/promises';
import { Agent, FormData } from 'undici';
import { LocalIoError } from '../errors.js';
import { parseBaseUrl } from './base-url.js';
import { ResponseShapeError } from './errors.js';
import { downloadResult } from './download.js';
import { callApi, parseAnswer, type ApiCall, type HttpContext } from './http.js';
import { modelFromRecord, statusFromData } from './normalize.js';
import { balanceAnswer, modelsPage, priceAnswer, requestIdAnswer, statusAnswer } from './schemas.js';
import type { z } from 'zod';
import type {
  CallOptions,
  ImageFile,
  Img2VideoPriceQuery,
  Img2VideoSubmit,
  JobType,
  Model,
  RateLimitInfo,
  ServiceClient,
  Txt2AudioParams,
  Txt2AudioSubmit,
} from './types.js';

export interface ServiceClientOptions {
  baseUrl: string;
  token: string;
  /** Keep-alive connections per origin. Default 16. */
  connections?: number;
  /** Default 10 000. */
  connectTimeoutMs?: number;
  /** Headers and body (idle) timeout of API calls. Default 60 000. */
  requestTimeoutMs?: number;
  /** Same, for img2video submits, which upload images. Default 300 000. */
  uploadTimeoutMs?: number;
  /** Headers and body (idle) timeout of result downloads. Default 300 000. */
  downloadTimeoutMs?: number;
  userAgent?: string;
}

/** How long an API call may wait for its answer (headers, then each piece of the body). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** The same for img2video submits, which upload images first. */
export const DEFAULT_UPLOAD_TIMEOUT_MS = 300_000;

const API = '/api/v1/client';
const MODELS_PAGE_SIZE = 50;
/** A models endpoint still paging after this many pages is broken, not big. */
const MAX_MODEL_PAGES = 200;
const DEFAULT_TYPES: JobType[] = ['txt2audio', 'img2video'];

async function imageBlob(image: ImageFile): Promise<Blob> {
  try {
    return new Blob([await readFile(image.path)], { type: image.contentType });
  } catch (error) {
    // Thrown before anything is sent: submitFailureKind counts it as nothing charged.
    throw new LocalIoError(`cannot read image ${image.path}: ${(error as Error).message}; check the file`, 'E_IMAGE_READ', error);
  }
}

// Bodies carry exactly the documented fields: an extra property riding along on a job object
// must not reach the service (it could be refused, or change what is generated and charged).
function txt2AudioParams(p: Txt2AudioParams): Record<string, unknown> {
  return { model: p.model, voice: p.voice, lang: p.lang, speed: p.speed, format: p.format, sample_rate: p.sample_rate };
}

function txt2AudioBody(job: Txt2AudioSubmit): Record<string, unknown> {
  return { text: job.text, ...txt2AudioParams(job) };
}

function img2VideoPriceBody(q: Img2VideoPriceQuery): Record<string, unknown> {
  return { model: q.model, width: q.width, height: q.height, steps: q.steps, frames: q.frames, fps: q.fps };
}

/** The multipart body of an img2video submit: numbers as strings, images as real file parts. */
async function img2VideoForm(job: Img2VideoSubmit): Promise<FormData> {
  const form = new FormData();
  form.append('prompt', job.prompt);
  if (job.negative_prompt !== undefined) form.append('negative_prompt', job.negative_prompt);
  form.append('model', job.model);
  for (const key of ['width', 'height', 'guidance', 'steps', 'frames', 'fps', 'seed'] as const) {
    form.append(key, String(job[key]));
  }
  form.append('first_frame_image', await imageBlob(job.first_frame_image), job.first_frame_image.filename);
  if (job.last_frame_image !== undefined) {
    form.append('last_frame_image', await imageBlob(job.last_frame_image), job.last_frame_image.filename);
  }
  return form;
}

/** Builds a client; `close()` ends its keep-alive connections (tests and the CLI must call it). */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const { origin, basePath } = parseBaseUrl(options.baseUrl);
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const uploadTimeoutMs = options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
  const downloadTimeoutMs = options.downloadTimeoutMs ?? 300_000;
  const userAgent = options.userAgent ?? 'mediabatch';
  const dispatcher = new Agent({ connections: options.connections ?? 16, connect: { timeout: connectTimeoutMs } });
  const http: HttpContext = { dispatcher, origin, basePath, token: options.token, userAgent, connectTimeoutMs };

  /** One call and its validated answer; every failure is a typed ApiError. */
  async function exchange<S extends z.ZodType>(schema: S, call: ApiCall): Promise<{ data: z.output<S>; rateLimit: RateLimitInfo }> {
    const answer = await callApi(http, call);
    return { data: parseAnswer(schema, answer, { method: call.method, path: `${basePath}${call.path}` }), rateLimit: answer.rateLimit };
  }

  async function submit(path: string, body: Pick<ApiCall, 'json' | 'form'>, timeoutMs: number, call: CallOptions) {
    const { data, rateLimit } = await exchange(requestIdAnswer, { method: 'POST', path, ...body, timeoutMs, signal: call.signal });
    return { value: { requestId: data.data.request_id }, rateLimit };
  }

  async function price(path: string, query: Record<string, unknown>, call: CallOptions) {
    const { data, rateLimit } = await exchange(priceAnswer, { method: 'POST', path, json: query, timeoutMs: requestTimeoutMs, signal: call.signal });
    return { value: { priceUsd: data.data.price }, rateLimit };
  }

  async function listModels(call: CallOptions & { types?: JobType[] } = {}): Promise<Model[]> {
    const path = `${API}/models`;
    const types = (call.types ?? DEFAULT_TYPES).join(',');
    const models: Model[] = [];
    for (let page = 1; page <= MAX_MODEL_PAGES; page++) {
      const query = { limit: String(MODELS_PAGE_SIZE), page: String(page), 'filter[inference_types]': types };
      const { data } = await exchange(modelsPage, { method: 'GET', path, query, timeoutMs: requestTimeoutMs, signal: call.signal });
      models.push(...data.data.map(modelFromRecord));
      // An empty page also ends the walk: a server that miscounts must not make us spin.
      if (page >= data.meta.last_page || data.data.length === 0) return models;
    }
    throw new ResponseShapeError({
      method: 'GET',
      path: `${basePath}${path}`,
      requestSent: true,
      issues: `still paging after ${MAX_MODEL_PAGES} pages of models`,
    });
  }

  return {
    listModels,
    submitTxt2Audio: (job, call = {}) => submit(`${API}/txt2audio`, { json: txt2AudioBody(job) }, requestTimeoutMs, call),
    submitImg2Video: async (job, call = {}) =>
      submit(`${API}/img2video`, { form: await img2VideoForm(job) }, uploadTimeoutMs, call),
    priceTxt2Audio: (query, call = {}) =>
      price(`${API}/txt2audio/price-calculation`, { ...txt2AudioParams(query), count_text: query.count_text }, call),
    priceImg2Video: (query, call = {}) => price(`${API}/img2video/price-calculation`, img2VideoPriceBody(query), call),
    async requestStatus(requestId, call = {}) {
      const path = `${API}/request-status/${encodeURIComponent(requestId)}`;
      const { data, rateLimit } = await exchange(statusAnswer, { method: 'GET', path, timeoutMs: requestTimeoutMs, signal: call.signal });
      return { value: statusFromData(data.data), rateLimit };
    },
    async balance(call = {}) {
      const path = `${API}/balance`;
      const { data } = await exchange(balanceAnswer, { method: 'GET', path, timeoutMs: requestTimeoutMs, signal: call.signal });
      return { balanceUsd: data.data.balance };
    },
    download: (url, destPath, call) =>
      downloadResult({ dispatcher, userAgent, timeoutMs: downloadTimeoutMs }, url, destPath, call),
    // Idempotent: the CLI's shutdown path and a finally block may both close it.
    async close() {
      if (!dispatcher.closed && !dispatcher.destroyed) await dispatcher.close();
    },
  };
}
