/**
 * The options the command line and the library share: their defaults, their bounds and how a
 * value is checked. A flag's label (`--budget`, or the variable that gave it) or the library's
 * option name (`budget`) says in a message which one was wrong.
 */
import { UsageError } from '../errors.js';
import { DEFAULT_MAX_RESULT_BYTES, DEFAULT_RETRY_FAILED, type PlanChoice, type Selection } from '../runner/index.js';

export const DEFAULT_BASE_URL = 'https://api.deapi.ai';
export const PLAN_CHOICES = ['basic', 'premium', 'unlimited'] as const;

/** The service's usual plan, or no pace at all against the in-process simulator. */
export const defaultPlan = (sim: boolean): PlanChoice => (sim ? 'unlimited' : 'premium');

/** The bounds of the numeric options of a run (and of an estimate: concurrency). */
export const BOUNDS = {
  concurrency: { min: 1, max: 64 },
  retries: { min: 0, max: 20, unit: 'retries' },
  pollMs: { min: 10, max: 600_000, unit: 'milliseconds' },
  maxResultMb: { min: 1, max: 10_240, unit: 'megabytes' },
} as const;

/** A flag given once is a string; given again, yargs makes the values a list. */
type Repeated = string | string[] | undefined;

type Selector = 'only' | 'tag' | 'redo';

/**
 * The selection the flags (or the library's options, which `label` names) ask for; an empty
 * value is refused (it would pick nothing, or everything).
 */
export function parseSelection(
  args: { only?: Repeated; tag?: Repeated; redo?: Repeated },
  label = (option: Selector): string => `--${option}`,
): Selection {
  const only = values(label('only'), 'only', args.only);
  const tags = values(label('tag'), 'tag', args.tag);
  const redo = values(label('redo'), 'redo', args.redo);
  const globs = redo.filter((id) => /[*?[]/.test(id));
  if (globs.length > 0) {
    throw new UsageError(`${label('redo')} takes ids of done or failed jobs, not patterns: got ${globs.map((g) => JSON.stringify(g)).join(', ')} (list them with: mediabatch status <manifest> --state done,failed --format ids)`);
  }
  return { only, tags, redo };
}

/** Every value of a repeated flag, split at commas when `commas` and then trimmed (ids never hold spaces). */
export function commaList(given: Repeated, commas = true): string[] {
  if (given === undefined) return [];
  const all = (Array.isArray(given) ? given : [given]).flatMap((value) => (commas ? String(value).split(',') : [String(value)]));
  return commas ? all.map((value) => value.trim()) : all;
}

function values(flag: string, option: Selector, given: Repeated): string[] {
  // A tag is taken as typed.
  const commas = option !== 'tag';
  const kept = commaList(given, commas);
  if (kept.some((value) => value.trim() === '')) {
    const what = option === 'tag' ? 'a tag' : option === 'redo' ? 'an id' : 'an id or a glob such as "ch-0*"';
    throw new UsageError(`${flag}: expected ${what}, got an empty value${commas ? ' (or an empty item of a comma list)' : ''}`);
  }
  return [...new Set(kept)];
}

/*
 * Numeric flags are read as strings and checked here: yargs' own number parsing turns "" into 0
 * and "abc" into NaN, and loses what was typed, which a message must quote.
 */

/** The text a flag (or its variable) was given, once; undefined when absent (repeated flags come as arrays). */
function flagText(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) {
    const all = value.map((item) => JSON.stringify(String(item))).join(', ');
    throw new UsageError(`${flag}: given ${value.length} times (${all}); give it once`);
  }
  return String(value);
}

function given(text: string): string {
  return text.trim() === '' ? 'an empty value' : JSON.stringify(text);
}

/** Plain decimal notation only: "1e3" or "0x10" as an amount of money is more likely a slip. */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;
const WHOLE = /^\d+$/;

/**
 * A whole number (a decimal one with `decimal`) from `min` to `max`, spaces around it allowed;
 * undefined when absent. `expected` says what was asked for, else the range does.
 */
export function parseNumber(
  flag: string,
  value: unknown,
  range: { min: number; max?: number; decimal?: boolean; unit?: string; expected?: string },
): number | undefined {
  const text = flagText(flag, value);
  if (text === undefined) return undefined;
  const n = (range.decimal === true ? DECIMAL : WHOLE).test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= range.min && n <= (range.max ?? Number.POSITIVE_INFINITY))) {
    const unit = range.unit === undefined ? '' : ` of ${range.unit}`;
    const expected = range.expected ?? `a whole number${unit} from ${range.min} to ${range.max}`;
    throw new UsageError(`${flag}: expected ${expected}, got ${given(text)}`);
  }
  return n;
}

/** `--budget`, MEDIABATCH_BUDGET or `--balance` (the label names which); undefined when not given. */
export function parseBudget(value: unknown, label = '--budget'): number | undefined {
  return parseNumber(label, value, { min: 0, decimal: true, expected: 'a number of USD ≥ 0 (such as 25 or 12.50)' });
}

/** `--plan` or MEDIABATCH_PLAN, read as typed so that both are refused with the same words. */
export function parsePlan(label: string, value: unknown): (typeof PLAN_CHOICES)[number] | undefined {
  const text = flagText(label, value);
  if (text === undefined) return undefined;
  const plan = PLAN_CHOICES.find((choice) => choice === text.trim());
  if (plan === undefined) throw new UsageError(`${label}: expected one of ${PLAN_CHOICES.map((c) => `"${c}"`).join(', ')}, got ${given(text)}`);
  return plan;
}

export const DEFAULT_LISTEN = '127.0.0.1:8787';
/** The service takes a webhook URL of at most this many characters. */
const MAX_URL_CHARS = 2048;


/** The service posts only to HTTPS addresses of at most 2048 characters: anything else is refused here, before a job is sent. */
export function parseWebhookUrl(from: string, text: string): string {
  const expected = `expected the public https:// address the service posts deliveries to (at most ${MAX_URL_CHARS} characters), such as https://hooks.example.com/mediabatch`;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new UsageError(`${from}: ${expected}; got ${JSON.stringify(text)}, which is not a URL`);
  }
  if (url.protocol !== 'https:') throw new UsageError(`${from}: ${expected}; got a URL of scheme ${url.protocol.replace(/:$/, '')} (the service posts webhooks over HTTPS only)`);
  if (url.href.length > MAX_URL_CHARS) throw new UsageError(`${from}: ${expected}; got ${url.href.length} characters`);
  if (url.hash !== '') throw new UsageError(`${from}: ${expected}; got a URL with a #fragment, which never reaches a server`);
  return url.href;
}

/** `HOST:PORT`, `[IPv6]:PORT`; port 0 takes a free one (the run prints which). */
export function parseListen(from: string, text: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || !(port >= 0 && port <= 65_535)) {
    throw new UsageError(`${from}: expected HOST:PORT for the webhook receiver, such as ${DEFAULT_LISTEN} (your proxy or tunnel forwards to it); got ${JSON.stringify(text)}`);
  }
  return { host, port };
}

/** How running jobs are asked about: after `pollMs` backing off, else at the simulator's pace or the service's. */
export function pollChoice(pollMs: number | undefined, sim: boolean) {
  if (pollMs !== undefined) return { firstMs: pollMs };
  return sim ? ('simulator' as const) : ('service' as const);
}

const MIB = 1024 * 1024;
export const DEFAULT_MAX_RESULT_MB = DEFAULT_MAX_RESULT_BYTES / MIB;

type RunNumber = 'pollMs' | 'maxResultMb' | 'retries';

/** A run's numeric options, checked, with their defaults: from the flags (`label` names each as given) or the library. */
export function runNumbers(
  given: Partial<Record<RunNumber, unknown>>,
  sim: boolean,
  label: (option: RunNumber) => string,
) {
  const pollMs = parseNumber(label('pollMs'), given.pollMs, BOUNDS.pollMs);
  const maxResultMb = parseNumber(label('maxResultMb'), given.maxResultMb, BOUNDS.maxResultMb) ?? DEFAULT_MAX_RESULT_MB;
  return {
    poll: pollChoice(pollMs, sim),
    maxResultBytes: maxResultMb * MIB,
    retryFailed: parseNumber(label('retries'), given.retries, BOUNDS.retries) ?? DEFAULT_RETRY_FAILED,
  };
}
