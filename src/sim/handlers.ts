/**
 * The service's endpoints as functions from a parsed request to a Reply, and the state they
 * share: balance, jobs, stats, webhooks. Auth, rate limits, faults and latency are the server's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { buildCatalogue, modelToWire, type SimModel } from './catalogue.js';
import type { FaultSpec } from './faults.js';
import { createStats, JobBook, statusAt, type SimJob, type SimStats } from './jobs.js';
import { SIM_KINDS, simKind, type SimJobType as JobType } from './kinds/index.js';
import { givesResultInline, round8 } from './kinds/kind.js';
import type { ResolvedOptions } from './options.js';
import { bucketError, ResultSigner, timestampedTranscript } from './results.js';
import { laravelBoolean, type Fields } from './rules.js';
import { Timers } from './timers.js';
import { webhookFields, WebhookSender } from './webhooks.js';

/** Generation is refused below this balance (docs/service.md, "Balance"). */
const MIN_BALANCE_USD = 0.49;
const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 50;

/** The URL ending of a transcript with timestamps: its segments, as JSON. */
const TIMESTAMPED = 'segments';
const endingOf = (job: SimJob): string => (job.timestamped ? TIMESTAMPED : simKind(job.type).result.ending);

/** An answer: handlers return one and only the server writes it, so faults can replace, delay or drop it. */
export interface Reply {
  status: number;
  body: string | Buffer;
  contentType: string;
}

export function json(status: number, body: unknown): Reply {
  return { status, body: JSON.stringify(body), contentType: 'application/json' };
}

/** An error as the service sends it: a top-level message, plus `errors` on a 422. */
export function apiError(status: number, message: string, errors?: Record<string, string[]>): Reply {
  return json(status, errors ? { message, errors } : { message });
}

/** Each field's sha256 as it arrived: a file's bytes, a text's UTF-8, a list's items as `<field>.<n>`. */
async function sentDigests(fields: Fields): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  const add = async (key: string, value: unknown): Promise<void> => {
    if (Array.isArray(value)) for (const [n, item] of value.entries()) await add(`${key}.${n}`, item);
    const bytes = value instanceof Blob ? new Uint8Array(await value.arrayBuffer()) : value;
    if (typeof bytes === 'string' || bytes instanceof Uint8Array) {
      digests[key] = createHash('sha256').update(bytes).digest('hex');
    }
  };
  for (const [key, value] of Object.entries(fields)) await add(key, value);
  return digests;
}

export class SimApi {
  balanceUsd: number;
  baseUrl = '';
  readonly timers = new Timers();
  readonly jobs: JobBook;
  readonly stats: SimStats;
  readonly webhooks: WebhookSender;
  private readonly catalogue: SimModel[];
  private readonly models: Map<string, SimModel>;
  private readonly signer: ResultSigner;
  // A result's bytes by its URL's ending (kinds may share one), built once: the bench downloads thousands.
  private readonly results = new Map<string, { contentType: string; body: Buffer }>([
    ...SIM_KINDS.map(({ result: r }) => [r.ending, { contentType: r.contentType, body: r.bytes() }] as const),
    [TIMESTAMPED, { contentType: 'application/json', body: timestampedTranscript() }],
  ]);

  constructor(
    private readonly options: ResolvedOptions,
    faults: () => FaultSpec,
  ) {
    this.balanceUsd = options.balanceUsd;
    this.catalogue = buildCatalogue(options.extraModels);
    this.models = new Map(this.catalogue.map((m) => [m.slug, m]));
    this.signer = new ResultSigner(randomBytes(32), options.clock);
    this.jobs = new JobBook(options, this.timers, (usd) => {
      this.balanceUsd = round8(this.balanceUsd + usd);
    });
    this.stats = createStats(this.jobs);
    const resultUrl = (job: SimJob, now: number): string => this.resultUrl(job, now);
    this.webhooks = new WebhookSender(options, this.timers, faults, this.stats.webhooks, this.jobs, resultUrl);
  }

  /** A Laravel page of models; `limit` is honoured up to 50, `per_page` is not. */
  listModels(url: URL): Reply {
    const limit = Number(url.searchParams.get('limit'));
    const perPage = Number.isInteger(limit) && limit > 0 ? Math.min(limit, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
    const pageParam = Number(url.searchParams.get('page'));
    const page = Number.isInteger(pageParam) && pageParam > 0 ? pageParam : 1;
    const filter = url.searchParams.get('filter[inference_types]');
    const types = filter?.split(',').map((t) => t.trim());
    const matching = types ? this.catalogue.filter((m) => m.types.some((t) => types.includes(t))) : this.catalogue;
    const total = matching.length;
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const slice = matching.slice((page - 1) * perPage, page * perPage);
    const path = `${this.baseUrl}/api/v1/client/models`;
    const link = (n: number): string => {
      const query = new URLSearchParams();
      if (url.searchParams.has('limit')) query.set('limit', String(perPage));
      if (filter !== null) query.set('filter[inference_types]', filter);
      query.set('page', String(n));
      return `${path}?${query.toString()}`;
    };
    const from = slice.length ? (page - 1) * perPage + 1 : null;
    const to = from && from + slice.length - 1;
    return json(200, {
      data: slice.map(modelToWire),
      links: { first: link(1), last: link(lastPage), prev: page > 1 ? link(page - 1) : null, next: page < lastPage ? link(page + 1) : null },
      meta: { current_page: page, last_page: lastPage, per_page: perPage, total, path, from, to },
    });
  }

  balance(): Reply {
    return json(200, { data: { balance: this.balanceUsd } });
  }

  async price(type: JobType, fields: Fields): Promise<Reply> {
    const result = await this.check(type, fields, true);
    return 'status' in result ? result : json(200, { data: { price: result.priceUsd } });
  }

  /** Its price and fingerprint, or the 422 with every problem. */
  private async check(type: JobType, fields: Fields, forPrice: boolean) {
    const result = await simKind(type).check(fields, this.models, this.options.pricing, forPrice);
    return result.ok ? result.value : apiError(422, result.bag.message(), result.bag.errors);
  }

  /** Charging happens at acceptance, the moment the request id exists: a lost answer still costs. */
  async submit(type: JobType, fields: Fields): Promise<Reply> {
    // Every kind's request may carry a webhook; checked first, as one rule of every form request.
    const hook = webhookFields(fields);
    if (!hook.ok) return apiError(422, Object.values(hook.errors).flat()[0] ?? 'The given data was invalid.', hook.errors);
    const result = await this.check(type, fields, false);
    if ('status' in result) return result;
    const { fingerprint, priceUsd } = result;
    if (this.balanceUsd < MIN_BALANCE_USD || this.balanceUsd < priceUsd) {
      return apiError(422, 'Not enough balance.', { balance: ['Not enough balance.'] });
    }
    this.balanceUsd = round8(this.balanceUsd - priceUsd);
    // The kind's checks refused any other spelling of the flag already.
    const asked = laravelBoolean(fields['return_result_in_response']) === true;
    const inline = givesResultInline(simKind(type).media) && asked;
    const timestamped = simKind(type).media === 'text' && laravelBoolean(fields['include_ts']) === true;
    const job = this.jobs.accept(type, fingerprint, priceUsd, inline, timestamped);
    this.stats.accepted.push({ requestId: job.requestId, type, fingerprint, at: job.acceptedAt });
    if (this.options.recordSent) this.stats.sent.set(job.requestId, await sentDigests(fields));
    if (hook.value !== undefined) this.webhooks.schedule(job, hook.value);
    return json(200, { data: { request_id: job.requestId } });
  }

  /** A text or an embedding as the status carries it. */
  private inlineResult(job: SimJob): string | undefined {
    return this.results.get(endingOf(job))?.body.toString('utf8');
  }

  /** A fresh pre-signed URL for a finished job's result. */
  resultUrl(job: SimJob, now: number): string {
    return this.signer.url(this.baseUrl, `${job.requestId}.${endingOf(job)}`, this.options.resultUrlTtlMs, now);
  }

  status(requestId: string): Reply {
    const job = this.jobs.jobs.get(requestId);
    if (!job) return apiError(404, 'No query results for the requested resource.');
    const now = this.options.clock.nowMs();
    const { status, progress } = statusAt(job, now);
    const data: Record<string, unknown> = {
      status,
      // The service sometimes sends progress as a string; clients must accept both.
      progress: job.index % 2 === 1 ? progress.toFixed(2) : progress,
      // A text or embedding asked for in the response comes in `result`, and not as a file.
      result_url: status === 'done' && !job.inline ? this.resultUrl(job, now) : null,
      results_alt_formats: null,
      result: status === 'done' && job.inline ? this.inlineResult(job) : null,
      preview: null,
      ...(status === 'error' ? job.error : {}),
    };
    return json(200, { data });
  }

  /** A result file, as a bucket serves a pre-signed URL: no auth, 403 XML when expired or forged. */
  download(file: string, url: URL): Reply {
    const match = /^([0-9a-f-]{36})\.([a-z0-9]+)$/.exec(file);
    const served = this.results.get(match?.[2] ?? '');
    const job = match && served ? this.jobs.jobs.get(match[1] ?? '') : undefined;
    if (!job || !served || statusAt(job, this.options.clock.nowMs()).status !== 'done') {
      return bucketError(404, 'NoSuchKey', 'The specified key does not exist.');
    }
    const verdict = this.signer.check(file, url.searchParams.get('expires'), url.searchParams.get('sig'));
    if (verdict === 'expired') return bucketError(403, 'AccessDenied', 'Request has expired');
    const mismatch = 'The request signature we calculated does not match the signature you provided.';
    if (verdict === 'bad-signature') return bucketError(403, 'SignatureDoesNotMatch', mismatch);
    return { status: 200, body: served.body, contentType: served.contentType };
  }
}
