import * as z from 'zod';
import { JOB_TYPES } from '../jobs/index.js';
import { JOB_STATES } from '../jobs/states.js';

/**
 * The `--json` documents and report files, defined once: the writers' types are inferred from
 * these schemas and docs/schemas/*.schema.json is generated from them (`npm run generate`).
 * Every document has `schema_version: 1` and snake_case keys; money is dollars as a decimal number
 * with at most 6 decimals, from whole micro-dollars. Objects are closed: a schema lists every field.
 */

export const SCHEMA_VERSION = 1;

const version = z.literal(SCHEMA_VERSION).describe('Version of this document shape; a breaking change raises it');
const money = (what: string) => z.number().describe(`${what}, in USD: a decimal number with at most 6 decimals`);
const count = (what: string) => z.int().min(0).describe(what);
const nullable = <T extends z.ZodType>(schema: T, when: string) => schema.nullable().describe(when);
const jobType = z.enum(JOB_TYPES).describe('The kind of job');
const priceSource = z.enum(['quoted', 'derived', 'cached']).describe('Where the price came from: the price endpoint, derived from probes of a linear price, or the ledger\'s cache');

/** A 0.1 camelCase key kept for one release: the same value as its snake_case replacement. */
function deprecated<T extends z.ZodType>(schema: T, replacement: string) {
  return schema.meta({ deprecated: true, description: `Deprecated (0.1 name): the same value as ${replacement}; removed in the next release` });
}

const totals = z.strictObject({ jobs: count('Jobs'), total: money('Their prices summed') });

export const estimateJobSchema = z.strictObject({
  id: z.string(),
  type: jobType,
  model: z.string(),
  price: money('The price of this job'),
  price_source: priceSource,
  to_send: z.boolean().describe('False for a job the ledger already paid for: it is not sent again'),
  priceSource: deprecated(priceSource, 'price_source'),
  step: count('Its step, when jobs of the manifest take others\' results: 1 for a job that takes none').optional(),
  upper_bound: z.boolean().optional()
    .describe('Priced at the catalogue\'s upper bound (its input is not made yet); present with `step`'),
});

const groupSchema = z.strictObject({
  key: z.string().describe('The price group: every priced field but the text length'),
  type: jobType,
  model: z.string(),
  params: z.record(z.string(), z.unknown()).describe('The priced fields and their values (voice, language, size …)'),
  jobs: count('Jobs in the group'),
  characters: nullable(count('Characters'), 'Characters of all its texts; null for kinds not priced by length'),
  distinct_lengths: nullable(count('Lengths'), 'Distinct text lengths; null for kinds not priced by length'),
  method: z.enum(['per-key', 'linear-derived', 'per-length-fallback', 'cached']).describe('How its prices were found'),
  calls: count('Price calls this group made'),
  total: money('Its prices summed'),
  jobs_by_source: z.strictObject({ quoted: count('Quoted'), derived: count('Derived'), cached: count('Cached') }),
});

const durationSchema = z.strictObject({
  ms: count('How long the plan\'s pace lets the run take, in milliseconds (generation time not counted)'),
  text: z.string(),
  status_polls_min: count('At least one status call per job'),
  status_per_day: z.number().int().nonnegative().nullable().describe("The plan's daily cap on status calls; null when it states none"),
  with_webhooks: z
    .strictObject({
      ms: count('Milliseconds the run takes when jobs are followed by webhooks (no status calls)'),
      text: z.string(),
      status_calls_min: count('Status calls webhooks leave at least: none for a job heard from'),
    })
    .describe('The same run followed by --webhook-url'),
  by_class: z.array(
    z.strictObject({ what: z.string(), requests: count('Requests'), ms: count('Milliseconds'), limit: z.string() }),
  ),
});

/** `estimate --json` and `<name>.estimate.json`. */
export const estimateDocumentSchema = z
  .strictObject({
    schema_version: version,
    total: money('Every job of the manifest, sent or not'),
    spent: money('What the ledger counts as spent by earlier runs'),
    budget: nullable(money('The cap'), 'The budget; null for none'),
    within_budget: z.boolean().describe('spent + to_spend <= budget'),
    price_calls: count('Price calls this estimate made (0 when every price was cached)'),
    jobs: z.array(estimateJobSchema).describe('Every job, in manifest order'),
    by_model: z.record(z.string(), totals),
    by_type: z.record(z.string(), totals),
    by_step: z.record(z.string(), totals).optional()
      .describe('Jobs and their prices by step, when jobs of the manifest take others\' results'),
    includes_upper_bounds: count('How many of the jobs are priced at an upper bound; present with by_step').optional(),
    groups: z.array(groupSchema).describe('Price groups, in the order they first appear'),
    to_spend: money('The jobs still to send'),
    jobs_to_send: count('Jobs still to send'),
    left: nullable(money('What the budget leaves'), 'budget - spent - to_spend (negative when over); null without a budget'),
    over_by: money('How far over the budget (0 when within)'),
    fit_count: count('How many of the jobs to send fit the budget, in manifest order (--partial)'),
    fit_total: money('Their prices summed'),
    balance: nullable(money('The account balance'), 'null when unknown'),
    balance_covers: nullable(z.boolean(), 'Whether the balance covers to_spend; null when unknown'),
    plan: z.string().describe('The plan whose pace the duration assumes'),
    cached_price_age_s: nullable(count('Seconds'), 'Age of the oldest cached price used; null when none was'),
    duration: durationSchema,
    withinBudget: deprecated(z.boolean(), 'within_budget'),
    priceCalls: deprecated(z.int().min(0), 'price_calls'),
    byModel: deprecated(z.record(z.string(), totals), 'by_model'),
  })
  .describe('mediabatch estimate: the cost report');

const counts = z.strictObject({
  pending: count('Not sent yet'),
  submitted: count('Sent, with a request id, not finished'),
  done: count('Result on disk'),
  failed: count('Refused by the service, or ended in error'),
  in_doubt: count('May have reached the service; never sent again automatically'),
  skipped: count('Left out by --partial'),
  submitting: count('Caught mid-submit: the next run marks them in doubt'),
  blocked: count('Waiting for an input (another job\'s result) that failed or was left out'),
});

export const statusJobSchema = z.strictObject({
  id: z.string(),
  type: jobType,
  state: z.enum(JOB_STATES),
  request_id: nullable(z.string(), 'The service\'s request id once it answered'),
  price: nullable(money('The price it was reserved at'), 'null before it was priced'),
  output: nullable(z.string(), 'Path of the downloaded result'),
  error: nullable(z.string(), 'Why it failed, is in doubt, is blocked, or was not collected'),
  tags: z.array(z.string()).describe("The job's tags from the manifest"),
  model: nullable(z.string(), 'null for a job recorded without one'),
  price_source: nullable(priceSource, 'null before it was priced'),
  in_manifest: z.boolean().describe('False for a job the manifest no longer lists, kept because it was sent'),
  collect_issue: nullable(z.enum(['not_collected', 'status_unknown']), 'Why a submitted job is not simply running'),
  retryable: nullable(z.boolean(), 'Whether the service called its failure retryable; null unless it failed at the service'),
  refunded: nullable(z.boolean(), 'Whether the service refunded its failure; a failure both retryable and refunded is sent again (run --retries, and any later run)'),
  step: count('Its step, when jobs of the manifest take others\' results: 1 for a job that takes none').optional(),
  inputs: z.record(z.string(), z.string()).optional()
    .describe('The jobs whose results it takes, by field (`first_frame_image`, `images.1`, `text`); with `step`'),
});

const errorSchema = z.strictObject({
  code: z.string().describe('Stable error code, e.g. E_MANIFEST, E_API_AUTH, E_CONNECT'),
  message: z.string().describe('The message printed on stderr'),
  exit_code: z.int().describe('The exit code of the command'),
});

const problemSchema = z.strictObject({
  file: z.string(),
  line: z.int().min(1),
  col: z.int().min(1),
  job_index: z.int().min(0).optional().describe('0-based position of the job in jobs:'),
  job_id: z.string().optional(),
  field: z.string().optional(),
  from_defaults: z.boolean().optional().describe('The value came from defaults.<type>'),
  message: z.string(),
  expected: z.string().optional(),
  got: z.string().optional(),
  hint: z.string().optional(),
});

/** `status --json`. */
export const statusDocumentSchema = z
  .strictObject({
    schema_version: version,
    counts,
    steps: z.record(z.string(), counts).optional()
      .describe('Jobs by state in each step, when jobs of the manifest take others\' results'),
    spent: money('What the ledger counts as spent'),
    budget: nullable(money('The cap'), 'The budget the last run was given; null for none'),
    jobs: z.array(statusJobSchema),
  })
  .describe('mediabatch status: the ledger');

/** `run --json` and `<name>.run.json` (written before the first submit and at the end). */
export const runDocumentSchema = statusDocumentSchema
  .extend({
    kind: z.literal('run'),
    finished: z.boolean().describe('False in the copy written before the first submit'),
    error: errorSchema.optional().describe('What ended the run early (token, balance, disk, connection)'),
  })
  .describe('mediabatch run: the summary');

/** What `--json` prints when a command fails. */
export const errorDocumentSchema = z
  .strictObject({ schema_version: version, error: errorSchema, problems: z.array(problemSchema).optional() })
  .describe('mediabatch: a command that failed');

export const validateDocumentSchema = z
  .union([
    z.strictObject({ schema_version: version, valid: z.literal(true), jobs: count('Jobs'), offline: z.boolean(), problems: z.array(problemSchema).max(0) }),
    z.strictObject({ schema_version: version, valid: z.literal(false), error: errorSchema, problems: z.array(problemSchema) }),
  ])
  .describe('mediabatch validate');

const voiceSchema = z.strictObject({ slug: z.string(), name: z.string(), gender: z.string().optional() });

export const modelsDocumentSchema = z
  .strictObject({
    schema_version: version,
    models: z.array(
      z.strictObject({
        slug: z.string(),
        name: z.string(),
        inference_types: z.array(z.string()),
        limits: z.record(z.string(), z.number()).describe("The service's limits, e.g. max_text, min_width"),
        features: z.record(z.string(), z.unknown()),
        defaults: z.record(z.string(), z.unknown()),
        languages: z.array(z.strictObject({ slug: z.string(), name: z.string(), voices: z.array(voiceSchema) })),
        loras: z.array(z.string()),
        status: z.string().optional(),
      }),
    ),
  })
  .describe('mediabatch models');

/** The simulator's GET /__sim/stats (for tests and trials against `mediabatch sim`). */
export const simStatsDocumentSchema = z
  .strictObject({
    schema_version: version,
    accepted: z.array(z.strictObject({ request_id: z.string(), type: jobType, fingerprint: z.string(), at: count('Epoch ms of acceptance') })),
    calls: z.record(z.string(), count('Calls')).describe('Calls by kind: models, balance, price, status, submit, download'),
    rate_limited: z.record(z.string(), count('429s')).describe('429s answered, by endpoint class'),
    faults: z.record(z.string(), count('Faults')).describe('Faults injected, by kind'),
    webhooks: z
      .strictObject({
        events: count('Events delivered or still being tried'),
        attempts: count('POSTs made: first attempts, retries, duplicates, replays and forgeries'),
        delivered: count('Attempts answered 2xx'),
        gave_up: count('Events whose every attempt failed'),
        answers: z.record(z.string(), count('Answers')).describe('Answers by HTTP status; `none` for no answer'),
        faults: z.record(z.string(), count('Faults')).describe('Webhook faults injected, by kind'),
      })
      .describe('Webhook deliveries the simulator made'),
    duplicates: z.array(z.strictObject({ fingerprint: z.string(), request_ids: z.array(z.string()) })).describe('Jobs accepted more than once'),
    jobs_by_status: z.record(z.string(), count('Jobs')),
    balance: z.number().describe("The simulated account's balance in USD, at the simulated service's precision (its prices have up to 8 decimals)"),
  })
  .describe('mediabatch sim: GET /__sim/stats');

export type EstimateDocument = z.infer<typeof estimateDocumentSchema>;
export type EstimateJobJson = z.infer<typeof estimateJobSchema>;
export type StatusDocument = z.infer<typeof statusDocumentSchema>;
export type StatusJobJson = z.infer<typeof statusJobSchema>;
export type RunDocument = z.infer<typeof runDocumentSchema>;
export type ErrorJson = z.infer<typeof errorSchema>;
export type ProblemJson = z.infer<typeof problemSchema>;
export type ErrorDocument = z.infer<typeof errorDocumentSchema>;
export type ModelsDocument = z.infer<typeof modelsDocumentSchema>;

/** Each document's schema by the file name it is committed under: docs/schemas/<name>.schema.json. */
export const DOCUMENT_SCHEMAS = {
  estimate: estimateDocumentSchema,
  run: runDocumentSchema,
  status: statusDocumentSchema,
  validate: validateDocumentSchema,
  models: modelsDocumentSchema,
  error: errorDocumentSchema,
  'sim-stats': simStatsDocumentSchema,
} as const;

export type DocumentName = keyof typeof DOCUMENT_SCHEMAS;

export const SCHEMAS_DIR = 'docs/schemas';

/** The JSON Schema of one document, as committed in docs/schemas/. */
export function documentJsonSchema(name: DocumentName): Record<string, unknown> {
  const schema = z.toJSONSchema(DOCUMENT_SCHEMAS[name], { target: 'draft-7' }) as Record<string, unknown>;
  return { ...schema, title: `mediabatch ${name} document` };
}
