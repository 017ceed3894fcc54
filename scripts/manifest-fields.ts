/**
 * The field tables of docs/manifest.md, made from the registry of job kinds (src/jobs) and the
 * manifest's own fields, so the page says what the validator enforces and cannot drift from it
 * (`npm run generate` writes them; test/generated.test.ts checks the page is up to date).
 */
import { JOB_KINDS, type ClassLimit, type FieldSpec, type JobKind } from '../src/jobs/index.js';
import { COMMON_FIELDS, SPLIT_FIELD, TYPES_TEXT } from '../src/manifest/fields.js';

export const BEGIN = '<!-- fields: generated from src/jobs by npm run generate; do not edit by hand -->';
export const END = '<!-- end of generated fields -->';
export const KINDS_BEGIN = '<!-- kinds: generated from src/jobs by npm run generate; do not edit by hand -->';
export const KINDS_END = '<!-- end of generated kinds -->';

/** A table cell: one line, no `|` to split it. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function row(cells: readonly string[]): string {
  return `| ${cells.map(cell).join(' | ')} |`;
}

const code = (name: string): string => `\`${name}\``;

function describe(spec: FieldSpec): string {
  return spec.schema.description ?? '';
}

function commonTable(): string[] {
  const splittable = JOB_KINDS.filter((kind) => kind.splittable !== undefined).map((kind) => code(kind.type));
  return [
    row(['field', 'required', 'expected', 'what it is']),
    row(['---', '---', '---', '---']),
    row([code('id'), 'no', COMMON_FIELDS.id.expected, 'derived from the content when absent (see "Ids")']),
    row([code('type'), 'yes', `one of ${TYPES_TEXT}`, 'what to generate: picks the kind, and so the other fields']),
    row([code('tags'), 'no', COMMON_FIELDS.tags.expected, describe(COMMON_FIELDS.tags)]),
    row([code('split'), 'no', SPLIT_FIELD.expected, `${describe(SPLIT_FIELD)}; only on ${splittable.join(', ')}`]),
  ];
}

function required(kind: JobKind, field: string): string {
  if (kind.exactlyOne?.includes(field) === true) return `exactly one of ${kind.exactlyOne.map(code).join(', ')}`;
  const when = { ...kind.content, ...kind.params }[field]?.requiredWhen;
  if (when !== undefined) {
    const values = when.in.map((value) => (value === undefined ? 'left out' : code(value)));
    return `when ${code(when.field)} is ${values.join(' or ')}`;
  }
  if (!kind.required.includes(field)) return 'no';
  return 'yes';
}

function kindTable(kind: JobKind): string[] {
  const fields: [string, FieldSpec, string][] = [
    ...Object.entries(kind.content).map(([name, spec]): [string, FieldSpec, string] => [name, spec, 'job']),
    ...Object.entries(kind.params).map(([name, spec]): [string, FieldSpec, string] => [name, spec, 'job or defaults']),
  ];
  return [
    row(['field', 'set on', 'required', 'expected', 'what it is']),
    row(['---', '---', '---', '---', '---']),
    ...fields.map(([name, spec, where]) => row([code(name), where, required(kind, name), spec.expected, describe(spec)])),
  ];
}

function limitText(limit: ClassLimit): string {
  return limit.perDay === undefined ? `${limit.perMinute}/min` : `${limit.perMinute}/min and ${limit.perDay}/day`;
}

const RESULT: Readonly<Record<string, string>> = { audio: 'an audio file', video: 'a video', image: 'an image' };

/** What a kind sends and how it is priced, in a sentence: the request of an empty job names its endpoint. */
function kindFacts(kind: JobKind): string {
  const request = kind.submit({ id: 'x', type: kind.type, params: {}, media: {} });
  const uploads = Object.values(kind.files).some((file) => file !== 'text');
  const json = uploads ? 'JSON; multipart with a file' : 'JSON';
  const body = 'multipart' in request ? 'multipart, the media as file parts' : json;
  const priced = [...kind.pricing.keyFields, ...(kind.pricing.laterKeyFields ?? [])].map(code).join(', ');
  const length = kind.pricing.by === 'per-length' ? " and the text's length in characters" : '';
  return (
    `Sent as \`POST /${request.endpoint}\` (${body}); its result is ${RESULT[kind.output.media] ?? kind.output.media}, checked by its bytes. ` +
    `Priced by ${priced}${length}: jobs that agree on these share one price. ` +
    `Submits allowed: Basic ${limitText(kind.plans.basic)}, Premium ${limitText(kind.plans.premium)}.`
  );
}

/** The generated part of docs/manifest.md, markers included. */
export function fieldTables(): string {
  const lines = [BEGIN, '', '### Fields every job has', '', ...commonTable(), ''];
  for (const kind of JOB_KINDS) {
    lines.push(`### \`${kind.type}\`: ${kind.title}`, '', kindFacts(kind), '', ...kindTable(kind), '');
  }
  lines.push(END);
  return lines.join('\n');
}

const SAVED_AS: Readonly<Record<string, string>> = {
  text: 'text: `<id>.txt` (+ `<id>.json` with timestamps)',
  embedding: 'embedding: `<id>.json`',
};

/** What a job of the kind is about (its content fields, the parameters coming from defaults too). */
function inputsOf(kind: JobKind): string {
  const names = Object.keys(kind.content);
  const pair = kind.exactlyOne?.map(code).join(' or ');
  const shown = names
    .filter((name) => !kind.exactlyOne?.includes(name))
    .map((name) => (kind.required.includes(name) ? code(name) : `${code(name)}?`));
  return [...(pair === undefined ? [] : [pair]), ...shown].join(', ');
}

/** README's table of kinds, markers included: one row a kind, what it takes and what it leaves. */
export function kindsTable(): string {
  const result = (kind: JobKind): string => SAVED_AS[kind.output.media] ?? `${kind.output.media}: \`<id>.<ext>\``;
  return [
    KINDS_BEGIN,
    row(['kind', 'makes', 'from (`?`: optional)', 'result']),
    row(['---', '---', '---', '---']),
    ...JOB_KINDS.map((kind) => row([code(kind.type), kind.title, inputsOf(kind), result(kind)])),
    KINDS_END,
  ].join('\n');
}
