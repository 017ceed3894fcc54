import { expectedGot, formatGot, type ManifestIssue } from './errors.js';
import { MAX_TEXT_BYTES, sizeText } from './files.js';
import { isJobType, JOB_TYPES, kindOf } from '../jobs/index.js';
import { pathKey, type Locator, type SchemaCheck } from './schema-issues.js';
import type { PathSegment } from './yaml-source.js';

/** Fields whose text is sent to the service as it is written. */
const SENT_TEXT_FIELDS = ['text', 'prompt', 'negative_prompt'] as const;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

interface Unsendable {
  expected: string;
  detail: string;
  hint: string;
}

// 1-based and in code points, as an editor's status bar counts them.
function characterNumber(text: string, index: number): number {
  return [...text.slice(0, index)].length + 1;
}

/**
 * Why a text cannot be sent, or undefined when it can. A NUL is what a `"\0"` escape (or a stray
 * byte) writes, and no service wants it in a prompt; an unpaired surrogate (a lone `"\ud800"`
 * escape) has no UTF-8 encoding at all, so the request body would carry U+FFFD instead of it.
 */
function unsendableText(text: string): Unsendable | undefined {
  const nul = text.indexOf('\u0000');
  if (nul !== -1) {
    const detail = `a NUL character at character ${characterNumber(text, nul)}`;
    return { expected: 'text without NUL characters', detail, hint: 'remove it (in quotes, "\\0" and "\\x00" write one)' };
  }
  const lone = LONE_SURROGATE.exec(text);
  if (lone !== null) {
    const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
    const detail = `an unpaired surrogate U+${code} at character ${characterNumber(text, lone.index)}`;
    return { expected: 'text that can be encoded as UTF-8', detail, hint: 'a "\\uD800"-style escape needs its other half; write the character itself' };
  }
  return undefined;
}

/** Inline text is capped like a text file: the same mistake (the wrong thing pasted) costs the same. */
function oversizeText(field: string, text: string): Unsendable | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_TEXT_BYTES) return undefined;
  const hint = field === 'text' ? 'split it into several jobs' : 'shorten it';
  return { expected: 'a text of at most 1 MB', detail: sizeText(bytes, MAX_TEXT_BYTES), hint };
}

function check(file: string, locate: Locator, schema: SchemaCheck, path: PathSegment[], value: unknown, where: Partial<ManifestIssue>): void {
  const key = pathKey(path);
  if (typeof value !== 'string' || schema.invalidPaths.has(key)) return;
  const problem = oversizeText(String(path.at(-1)), value) ?? unsendableText(value);
  if (problem === undefined) return;
  // Marked invalid like a schema failure: the value is neither merged nor reported again as missing.
  schema.invalidPaths.add(key);
  const at = locate(path);
  const body = expectedGot(problem.expected, `${formatGot(value)} (${problem.detail})`);
  schema.issues.push({ file: at.file ?? file, line: at.line, col: at.col, ...where, ...body, hint: problem.hint });
}

/** Reports a job's text fields that cannot be sent as written, or are too long to be meant, into `schema`. */
export function checkJobTexts(file: string, locate: Locator, job: unknown, path: PathSegment[], schema: SchemaCheck, jobIndex?: number): void {
  if (job === null || typeof job !== 'object') return;
  const record = job as Record<string, unknown>;
  const type = record['type'];
  if (!isJobType(type)) return;
  for (const field of SENT_TEXT_FIELDS) {
    if (!(field in kindOf(type).content) && !(field in kindOf(type).params)) continue;
    check(file, locate, schema, [...path, field], record[field], { ...(jobIndex === undefined ? {} : { jobIndex }), field });
  }
}

/** The same for the text fields of defaults. */
export function checkDefaultsTexts(file: string, locate: Locator, root: unknown, schema: SchemaCheck): void {
  const { defaults } = (root ?? {}) as { defaults?: unknown };
  for (const type of JOB_TYPES) {
    const block = (defaults as Record<string, Record<string, unknown> | undefined> | null | undefined)?.[type];
    if (block === null || typeof block !== 'object') continue;
    for (const field of SENT_TEXT_FIELDS) {
      if (!(field in kindOf(type).params)) continue;
      check(file, locate, schema, ['defaults', type, field], block[field], { field: `defaults.${type}.${field}` });
    }
  }
}
