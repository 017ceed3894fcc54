/**
 * The service's endpoints as functions from a parsed request to a Reply. Auth, rate limits,
 * faults and latency are the server's business; here is only what each endpoint does.
 */
import type { SimJobType as JobType } from './types.js';
import { buildCatalogue, modelToWire, type SimModel } from './catalogue.js';
import { audioFingerprint, imageFingerprint, videoFingerprint } from './fingerprint.js';
import { apiError, json, type Reply } from './http-util.js';
import { JobBook, type SimJob } from './jobs.js';
import type { ResolvedOptions } from './options.js';
import { priceAudio, priceImage, priceVideo } from './pricing.js';
import { bucketError, mp4StandIn, pngImage, wavTone, type ResultSigner } from './results.js';
import type { Fields } from './rules.js';
import type { SimStats } from './stats.js';
import { webhookFields, type WebhookRequest, type WebhookSender } from './webhooks.js';
import { validateAudio, validateImage, validateTextVideoSubmit, validateVideoPrice, validateVideoSubmit, type Validated } from './validate.js';

/** Generation is refused below this balance (docs/service.md, "Balance"). */
const MIN_BALANCE_USD = 0.49;
const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 50;
const NOT_FOUND = 'No query results for the requested resource.';

export interface Wallet {
  balanceUsd: number;
}

const round8 = (usd: number): number => Math.round(usd * 1e8) / 1e8;

/**
 * How each kind's result is stored and served. An image's URL ends in `.image`, not `.png`: the
 * service's URLs say nothing reliable about an image's type, so clients must read its bytes.
 */
const RESULT_FILE: Record<JobType, { ending: 'wav' | 'mp4' | 'image'; contentType: string }> = {
  txt2audio: { ending: 'wav', contentType: 'audio/wav' },
  img2video: { ending: 'mp4', contentType: 'video/mp4' },
  txt2video: { ending: 'mp4', contentType: 'video/mp4' },
  txt2img: { ending: 'image', contentType: 'image/png' },
};

/** Unreachable once `invalid` has answered for a failed validation; keeps the types exact. */
function refused(): Reply {
  return apiError(422, 'The given data was invalid.');
}

function invalid(result: Validated<unknown>): Reply | undefined {
  return result.ok ? undefined : apiError(422, result.bag.message(), result.bag.errors);
}

export class SimApi {
  private readonly catalogue: SimModel[];
  private readonly models: Map<string, SimModel>;
  // Built once: the bench downloads thousands of results.
  private readonly wav = wavTone();
  private readonly mp4 = mp4StandIn();
  private readonly png = pngImage();

  constructor(
    private readonly options: ResolvedOptions,
    private readonly wallet: Wallet,
    private readonly jobs: JobBook,
    private readonly stats: SimStats,
    private readonly signer: ResultSigner,
    private readonly baseUrl: () => string,
    private readonly webhooks: WebhookSender,
  ) {
    this.catalogue = buildCatalogue(options.extraModels);
    this.models = new Map(this.catalogue.map((m) => [m.slug, m]));
  }

  /** A Laravel page of models; `limit` is honoured up to 50, `per_page` is not. */
  listModels(url: URL): Reply {
    const limit = Number(url.searchParams.get('limit'));
    const perPage = Number.isInteger(limit) && limit > 0 ? Math.min(limit, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
    const pageParam = Number(url.searchParams.get('page'));
    const page = Number.isInteger(pageParam) && pageParam > 0 ? pageParam : 1;
    const filter = url.searchParams.get('filter[inference_types]');
    const types = filter === null ? undefined : filter.split(',').map((t) => t.trim()).filter((t) => t !== '');
    const matching = types === undefined ? this.catalogue : this.catalogue.filter((m) => m.types.some((t) => types.includes(t)));
    const total = matching.length;
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const slice = matching.slice((page - 1) * perPage, page * perPage);
    const path = `${this.baseUrl()}/api/v1/client/models`;
    const link = (n: number): string => {
      const query = new URLSearchParams();
      if (url.searchParams.has('limit')) query.set('limit', String(perPage));
      if (filter !== null) query.set('filter[inference_types]', filter);
      query.set('page', String(n));
      return `${path}?${query.toString()}`;
    };
    return json(200, {
      data: slice.map(modelToWire),
      links: { first: link(1), last: link(lastPage), prev: page > 1 ? link(page - 1) : null, next: page < lastPage ? link(page + 1) : null },
      meta: {
        current_page: page, last_page: lastPage, per_page: perPage, total, path,
        from: slice.length ? (page - 1) * perPage + 1 : null, to: slice.length ? (page - 1) * perPage + slice.length : null,
      },
    });
  }

  balance(): Reply {
    return json(200, { data: { balance: this.wallet.balanceUsd } });
  }

  price(type: JobType, fields: Fields): Reply {
    const priced = (result: Validated<unknown>, price: () => number): Reply => invalid(result) ?? json(200, { data: { price: price() } });
    const mode = this.options.pricing;
    switch (type) {
      case 'txt2audio': {
        const result = validateAudio(fields, this.models, true);
        return priced(result, () => (result.ok ? priceAudio(result.value, mode) : 0));
      }
      case 'txt2img': {
        const result = validateImage(fields, this.models);
        return priced(result, () => (result.ok ? priceImage(result.value, mode) : 0));
      }
      case 'img2video':
      case 'txt2video': {
        const result = validateVideoPrice(fields, this.models, type);
        return priced(result, () => (result.ok ? priceVideo(result.value, mode) : 0));
      }
    }
  }

  async submit(type: JobType, fields: Fields): Promise<Reply> {
    const mode = this.options.pricing;
    // Every kind's request may carry a webhook; checked first, as one rule of every form request.
    const hook = webhookFields(fields);
    if (!hook.ok) return apiError(422, Object.values(hook.errors).flat()[0] ?? 'The given data was invalid.', hook.errors);
    const accept = (fingerprint: string, priceUsd: number): Reply => this.accept(type, fingerprint, priceUsd, hook.value);
    switch (type) {
      case 'txt2audio': {
        const result = validateAudio(fields, this.models, false);
        return invalid(result) ?? (result.ok ? accept(audioFingerprint(result.value), priceAudio(result.value, mode)) : refused());
      }
      case 'txt2img': {
        const result = validateImage(fields, this.models);
        return invalid(result) ?? (result.ok ? accept(imageFingerprint(result.value), priceImage(result.value, mode)) : refused());
      }
      case 'img2video':
      case 'txt2video': {
        const result = type === 'img2video' ? await validateVideoSubmit(fields, this.models) : validateTextVideoSubmit(fields, this.models);
        return invalid(result) ?? (result.ok ? accept(videoFingerprint(result.value, type), priceVideo(result.value, mode)) : refused());
      }
    }
  }

  /** A fresh pre-signed URL for a finished job's result. */
  resultUrl(job: SimJob, now: number): string {
    return this.signer.url(this.baseUrl(), `${job.requestId}.${RESULT_FILE[job.type].ending}`, this.options.resultUrlTtlMs, now);
  }

  // Charging happens at acceptance, the moment the request id exists: a lost answer still costs.
  private accept(type: JobType, fingerprint: string, priceUsd: number, webhook: WebhookRequest | undefined): Reply {
    if (this.wallet.balanceUsd < MIN_BALANCE_USD || this.wallet.balanceUsd < priceUsd) {
      return apiError(422, 'Not enough balance.', { balance: ['Not enough balance.'] });
    }
    this.wallet.balanceUsd = round8(this.wallet.balanceUsd - priceUsd);
    const job = this.jobs.accept(type, fingerprint, priceUsd);
    this.stats.accepted.push({ requestId: job.requestId, type, fingerprint, at: job.acceptedAt });
    if (webhook !== undefined) this.webhooks.schedule(job, webhook);
    return json(200, { data: { request_id: job.requestId } });
  }

  status(requestId: string): Reply {
    const job = this.jobs.jobs.get(requestId);
    if (!job) return apiError(404, NOT_FOUND);
    const now = this.options.clock.nowMs();
    const { status, progress } = JobBook.statusAt(job, now);
    const data: Record<string, unknown> = {
      status,
      // The service sometimes sends progress as a string; clients must accept both.
      progress: job.index % 2 === 1 ? progress.toFixed(2) : progress,
      result_url: null,
      results_alt_formats: null,
      result: null,
      preview: null,
    };
    if (status === 'done') {
      data['result_url'] = this.resultUrl(job, now);
    } else if (status === 'error' && job.error) {
      Object.assign(data, job.error);
    }
    return json(200, { data });
  }

  /** A result file, as a bucket serves a pre-signed URL: no auth, 403 XML when expired or forged. */
  download(file: string, url: URL): Reply {
    const match = /^([0-9a-f-]{36})\.(wav|mp4|image)$/.exec(file);
    const job = match ? this.jobs.jobs.get(match[1] ?? '') : undefined;
    const xml = 'application/xml';
    if (!job || JobBook.statusAt(job, this.options.clock.nowMs()).status !== 'done') {
      return { status: 404, body: bucketError('NoSuchKey', 'The specified key does not exist.'), contentType: xml };
    }
    const verdict = this.signer.check(file, url.searchParams.get('expires'), url.searchParams.get('sig'));
    if (verdict === 'expired') return { status: 403, body: bucketError('AccessDenied', 'Request has expired'), contentType: xml };
    if (verdict === 'bad-signature') {
      return { status: 403, body: bucketError('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.'), contentType: xml };
    }
    const bodies = { wav: this.wav, mp4: this.mp4, image: this.png };
    const ending = (match?.[2] ?? 'mp4') as keyof typeof bodies;
    return { status: 200, body: bodies[ending], contentType: Object.values(RESULT_FILE).find((r) => r.ending === ending)?.contentType ?? 'video/mp4' };
  }
}
