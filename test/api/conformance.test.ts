/**
 * Conformance: every request the client sends, for every kind in the registry, checked against
 * the service's official OpenAPI document (test/fixtures/openapi) as it arrives at a scripted
 * server: submits (with and without webhooks), price calls, request status, models and balance.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../src/api/client.js';
import type { ServiceClient } from '../../src/api/types.js';
import { catalogueTypesOf, factOf, JOB_KINDS, JOB_TYPES, requiredFor, type JobKind, type MediaFact, type SendableJob, type ServiceRequest } from '../../src/jobs/index.js';
import { imageSides } from '../../src/image-sides.js';
import { mediaFacts, type MediaFacts } from '../../src/media-type.js';
import { withRequestFields } from '../../src/runner/webhooks.js';
import { OpenApi, type OpenApiCheck } from '../support/openapi.js';
import { SAMPLE_JOBS, type SampleJob } from './conformance-samples.js';
import { startScriptedServer, type RecordedRequest, type Reply } from './scripted-server.js';

const api = OpenApi.load();

/**
 * Where today's requests knowingly differ from the document, each with the source that says the
 * live service takes them (docs/service.md). Each entry matches an operation and a problem; every
 * entry must still occur, so a difference the client stops sending is removed here.
 */
const KNOWN_DIFFERENCES: ReadonlyArray<{ operation: RegExp; problem: RegExp; why: string }> = [
  {
    operation: /^POST \/api\/v1\/client\/txt2audio$/,
    problem: /^content type application\/json is not one it takes \(multipart\/form-data\)$/,
    why: 'the documentation and the official clients send speech as JSON; multipart is needed only to upload a voice',
  },
  {
    operation: /^POST \/api\/v1\/client\/([^/]+|videos\/replace)$/,
    // In a body of several variants (oneOf) the same problem is named through the nearest one.
    problem: /^(no branch of the oneOf fits; nearest \(\d+\): )?(body:|field) webhook_secret is not a property of the schema$/,
    why: 'the documentation of webhooks has webhook_secret (32 to 255 characters, signs each delivery) on every submit',
  },
];

/** The service's answers, by path: enough for the client to accept each call. */
function answer({ method, url }: RecordedRequest): Reply {
  const path = new URL(url, 'http://127.0.0.1').pathname;
  if (path.endsWith('/balance')) return { body: { data: { balance: 12.5 } } };
  if (path.endsWith('/models')) {
    return { body: { data: [], links: {}, meta: { current_page: 1, last_page: 1, per_page: 50, total: 0 } } };
  }
  if (path.includes('/request-status/')) {
    return { body: { data: { status: 'done', progress: 100, result_url: 'https://files.example/r.png' } } };
  }
  if (method === 'POST' && path.includes('price')) return { body: { data: { price: 0.0125 } } };
  return { body: { data: { request_id: 'c08a339c-73e5-4d67-a4d5-231302fbff9a' } } };
}

async function sendableOf(kind: JobKind, name: string, sample: SampleJob): Promise<SendableJob> {
  const media: Record<string, SendableJob['media'][string]> = {};
  // The facts a kind prices by are copied from its files into its parameters, as the manifest does.
  const params = { ...sample.params };
  for (const [field, { bytes, contentType }] of Object.entries(sample.files ?? {})) {
    const path = join(folder, `${kind.type}-${name}-${field}`);
    await writeFile(path, bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    media[field] = { path, written: path, contentType, bytes: bytes.length, sha256 };
    const spec = factsOf(kind, field);
    const facts: MediaFacts = Object.keys(spec).length === 0 ? {} : (imageSides(bytes) ?? (await mediaFacts(bytes)));
    for (const [param, fact] of Object.entries(spec)) params[param] = factOf(facts, fact as MediaFact);
  }
  const textChars = sample.text === undefined ? undefined : [...sample.text].length;
  return { id: `${kind.type}-${name}`, type: kind.type, params, text: sample.text, textChars, media };
}

function factsOf(kind: JobKind, field: string): Readonly<Record<string, string>> {
  const file = { ...kind.content, ...kind.params }[field]?.file;
  return typeof file === 'object' ? (file.facts ?? {}) : {};
}

/** The fields a job sets, by the names its kind's spec gives them (a file-fed text counts as its text). */
function fieldsSet(kind: JobKind, job: SendableJob): string[] {
  const text = kind.textFrom !== undefined && job.text !== undefined ? [kind.textFrom.field] : [];
  const facts = Object.keys(kind.files).flatMap((field) => Object.keys(factsOf(kind, field)));
  return [...Object.keys(job.params).filter((param) => !facts.includes(param)), ...new Set(Object.keys(job.media).map((key) => key.split('.')[0]!)), ...text].sort();
}

/** Every field, or the required ones; of an `exactlyOne` pair, a full sample sets one (`set` says which). */
function kindFields(kind: JobKind, which: 'all' | 'required', set: readonly string[], params: SendableJob['params']): string[] {
  const other = kind.exactlyOne?.find((field) => !set.includes(field) && kind.exactlyOne?.some((one) => set.includes(one)));
  const all = Object.keys({ ...kind.content, ...kind.params }).filter((field) => field !== kind.textFrom?.file && field !== other);
  // What a job with these values must give (speech's voice, unless the voice is cloned or designed).
  const required = [...requiredFor(kind, params), ...(kind.exactlyOne ? [kind.exactlyOne.find((field) => set.includes(field)) ?? kind.exactlyOne[0]] : [])];
  return [...new Set(which === 'all' ? all : required)].sort();
}

const NONE = { unset: [], unknown: [] };

/** The fields a sample should set but does not, and those it sets that it should not. */
function mismatch(set: readonly string[], expected: readonly string[]) {
  const unset = expected.filter((field) => !set.includes(field));
  return { unset, unknown: set.filter((field) => !expected.includes(field)) };
}

function priceRequest(kind: JobKind, job: SendableJob): ServiceRequest {
  const { pricing } = kind;
  return pricing.by === 'per-key' ? pricing.request(job) : pricing.request(job, pricing.lengthOf(job));
}

/** Each check's problems but the known differences, which are collected in `seen`. */
function unexpected(checks: readonly OpenApiCheck[], seen = new Set<string>()): OpenApiCheck[] {
  return checks
    .map(({ operation, problems }) => {
      const left = problems.filter((problem) => {
        const known = KNOWN_DIFFERENCES.find(
          (known) => known.operation.test(operation ?? '') && known.problem.test(problem),
        );
        if (known !== undefined) seen.add(known.why);
        return known === undefined;
      });
      return { operation, problems: left };
    })
    .filter(({ problems }) => problems.length > 0);
}

/** What each kind's requests (and the account's: status, models, balance) showed, by kind. */
const captured = new Map<string, { submits: OpenApiCheck[]; prices: OpenApiCheck[] }>();
let account: OpenApiCheck[] = [];
let folder = '';

async function captureKind(kind: JobKind, samples: { full: SampleJob; minimal: SampleJob }, client: ServiceClient) {
  const full = await sendableOf(kind, 'full', samples.full);
  const minimal = await sendableOf(kind, 'minimal', samples.minimal);
  const secret = 'a-webhook-secret-of-thirty-two-chars-or-more';
  const webhook = { webhook_url: 'https://hooks.example/mediabatch', webhook_secret: secret };
  const submits = [kind.submit(full), kind.submit(minimal), withRequestFields(kind.submit(full), webhook, secret)];
  for (const request of submits) await client.submit(request);
  for (const job of [full, minimal]) await client.price(priceRequest(kind, job));
}

// Every request is sent once, in order, by the real client; each test reads what its part showed.
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'mediabatch-conformance-'));
  const server = await startScriptedServer(answer);
  const client = createServiceClient({ baseUrl: server.url, token: 'conformance-token' });
  try {
    const check = (from: number) => Promise.all(server.requests.slice(from).map((request) => api.check(request)));
    for (const kind of JOB_KINDS) {
      const samples = SAMPLE_JOBS[kind.type];
      if (samples === undefined) continue;
      const from = server.requests.length;
      await captureKind(kind, samples, client);
      const checks = await check(from);
      captured.set(kind.type, { submits: checks.slice(0, 3), prices: checks.slice(3) });
    }
    const from = server.requests.length;
    await client.requestStatus('c08a339c-73e5-4d67-a4d5-231302fbff9a');
    await client.listModels({ types: catalogueTypesOf(JOB_TYPES) });
    await client.balance();
    account = await check(from);
  } finally {
    await client.close();
    await server.close();
  }
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('every request conforms to the official OpenAPI document', () => {
  it('has a full and a minimal sample job for every kind in the registry', () => {
    const missing = JOB_TYPES.filter((type) => SAMPLE_JOBS[type] === undefined);
    expect(missing, 'add a sample job for each of these kinds to test/api/conformance-samples.ts').toEqual([]);
  });

  for (const kind of JOB_KINDS) {
    it(`${kind.type}: submits (with webhooks too) and price calls, of a full and a minimal job`, async () => {
      const samples = SAMPLE_JOBS[kind.type];
      if (samples === undefined) throw new Error(`no sample job for ${kind.type} in test/api/conformance-samples.ts`);
      const [fullJob, minimalJob] = [await sendableOf(kind, 'full', samples.full), await sendableOf(kind, 'minimal', samples.minimal)];
      const [full, minimal] = [fieldsSet(kind, fullJob), fieldsSet(kind, minimalJob)];
      expect(mismatch(full, kindFields(kind, 'all', full, fullJob.params)), 'the full sample sets every field').toEqual(NONE);
      const required = kindFields(kind, 'required', minimal, minimalJob.params);
      expect(mismatch(minimal, required), 'the minimal one only the required').toEqual(NONE);

      const { submits, prices } = captured.get(kind.type) ?? { submits: [], prices: [] };
      expect(submits).toHaveLength(3);
      expect(new Set(submits.map(({ operation }) => operation)).size, 'every submit reaches one operation').toBe(1);
      const priced = expect.stringMatching(/price/);
      expect(prices.map(({ operation }) => operation)).toEqual([priced, priced]);
      expect(unexpected([...submits, ...prices])).toEqual([]);
    });
  }

  it('request status, the models walk with its filter, and the balance', () => {
    expect(account.map(({ operation }) => operation)).toEqual([
      'GET /api/v1/client/request-status/{request_id}',
      'GET /api/v1/client/models',
      'GET /api/v1/client/balance',
    ]);
    expect(unexpected(account)).toEqual([]);
  });

  it('lists only differences that still occur', () => {
    const all = [...[...captured.values()].flatMap(({ submits, prices }) => [...submits, ...prices]), ...account];
    const seen = new Set<string>();
    unexpected(all, seen);
    const stale = KNOWN_DIFFERENCES.filter((entry) => !seen.has(entry.why));
    expect(stale.map(({ why }) => why), 'remove these from KNOWN_DIFFERENCES: no request shows them').toEqual([]);
  });
});
