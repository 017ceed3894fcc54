import { dirname, isAbsolute, join } from 'node:path';
import { isJobType, JOB_TYPES, type JobType } from '../../jobs/index.js';
import { expectedGot, formatGot, type ManifestIssue, closest, quotedList } from '../errors.js';
import { TYPE_FIELD, COMMON_FIELDS, fromOf, ID_PATTERN } from '../fields.js';
import type { SourceContext, SourceEntry, SourceItem, SourceLocation, SourceProblem, TableEntry } from './types.js';

/** Rows a reader of an in-memory list (files, matrix) hands over at once, as a file's chunk would. */
export const BATCH_ROWS = 1000;

export type ProblemBody = Pick<ManifestIssue, 'field' | 'message' | 'expected' | 'got' | 'hint'>;

export function problemAt(at: SourceLocation, body: ProblemBody, ordinal?: number): SourceItem {
  const problem: SourceProblem = { file: at.file, line: at.line, col: at.col, ...body };
  if (problem.hint === undefined) delete problem.hint;
  if (problem.field === undefined) delete problem.field;
  if (ordinal !== undefined) problem.ordinal = ordinal;
  return { problem };
}

export function complaintBody(field: string | undefined, complaint: Complaint): ProblemBody {
  return { ...(field === undefined ? {} : { field }), ...expectedGot(complaint.expected, complaint.got), hint: complaint.hint };
}

/** A source file's path as messages show it: beside the manifest as the user named it. */
export function sourceDisplayPath(manifestFile: string, written: string): string {
  return isAbsolute(written) ? written : join(dirname(manifestFile), written);
}

export function manifestAt(context: SourceContext, path: readonly (string | number)[], target?: 'key'): SourceLocation {
  return { file: context.manifestFile, ...context.locate(path, target) };
}

/** The entry's id template's first placeholder the source cannot fill, as a problem at `id:`. */
export function templateProblem(
  entry: SourceEntry,
  context: SourceContext,
  offered: readonly string[],
  allowed = (p: Placeholder) => p.attribute !== 'index' && offered.includes(p.name),
): SourceItem | undefined {
  const complaint = entry.idTemplate === undefined ? undefined : unknownPlaceholder(entry.idTemplate, offered, allowed);
  return complaint === undefined ? undefined : problemAt(manifestAt(context, ['id']), complaintBody('id', complaint));
}

export interface RowInput {
  ordinal: number;
  entry: SourceEntry;
  context: SourceContext;
  /** The entry's fields with the row's own over them, still raw. */
  fields: Record<string, unknown>;
  at: SourceLocation;
  /** Where the row itself writes a field (a cell, a key, a matrix value); else the entry's key, else `at`. */
  ownAt?: ((field: string) => SourceLocation | undefined) | undefined;
  /** Turns raw values into what their fields want once the row's type is known (CSV cells). */
  coerce?: ((type: JobType, fields: Record<string, unknown>) => void) | undefined;
  /** Fills an id template's placeholders the source names itself; then `{n}` and the row's fields. */
  fill?: ((placeholder: Placeholder) => Filling | undefined) | undefined;
}

function typeProblem(input: RowInput, given: unknown, typeAt: SourceLocation): SourceItem {
  if (given === undefined) {
    const hint = 'give the row a type, or set type: on the source entry';
    return problemAt(input.at, { field: 'type', ...expectedGot(TYPE_FIELD.expected, 'nothing'), hint }, input.ordinal);
  }
  const near = typeof given === 'string' ? closest(given, JOB_TYPES, 1) : [];
  const hint = near.length > 0 ? `did you mean ${quotedList(near)}?` : undefined;
  const body = { field: 'type', ...expectedGot(TYPE_FIELD.expected, formatGot(given)), hint };
  return problemAt(typeAt, body, input.ordinal);
}

/**
 * The row as a reader yields it: its type settled (the row's own, else the entry's), its values
 * coerced, its id made from the entry's template unless the row gives one itself. A row whose
 * type or id cannot be settled is a problem instead.
 */
export function assembleRow(input: RowInput): SourceItem {
  const { fields, entry, ordinal, at } = input;
  const fieldAt = (field: string): SourceLocation =>
    input.ownAt?.(field) ?? (Object.hasOwn(entry.fields, field) ? manifestAt(input.context, [field]) : at);
  const given = fields['type'] ?? entry.type;
  if (!isJobType(given)) return typeProblem(input, given, fieldAt('type'));
  fields['type'] = given;
  input.coerce?.(given, fields);
  const own = (p: Placeholder) => (Object.hasOwn(fields, p.name) ? { value: fields[p.name] } : undefined);
  const fill = (p: Placeholder) => input.fill?.(p) ?? (p.name === 'n' ? { value: ordinal + 1 } : own(p));
  if (entry.idTemplate !== undefined && fields['id'] === undefined) {
    const id = renderId(entry.idTemplate, fill);
    // A value that makes no id is shown where it is written (a cell, a matrix value).
    const idAt = id.placeholder === undefined ? at : fieldAt(id.placeholder.name);
    if (!id.ok) return problemAt(idAt, complaintBody('id', id), ordinal);
    fields['id'] = id.value;
  }
  // `{ from: "img-{stem}" }` templates, filled as the id is.
  for (const [field, value] of Object.entries(fields)) {
    const items: unknown[] = Array.isArray(value) ? value : [value];
    if (!items.some((item) => /[{}]/.test(fromOf(item) ?? ''))) continue;
    const filled = items.map((item) => filledFrom(item, fill));
    const bad = filled.find((item) => !item.ok);
    if (bad !== undefined && !bad.ok) return problemAt(fieldAt(field), complaintBody(field, bad), ordinal);
    const values = filled.map((item) => (item.ok ? item.value : undefined));
    fields[field] = Array.isArray(value) ? values : values[0];
  }
  return { row: { ordinal, type: given, fields, at, fieldAt } };
}

/** `{ from: "img-{stem}" }` made into the id it names for this row, as an id template is; any other value as it is. */
function filledFrom(value: unknown, fill: (p: Placeholder) => Filling | undefined): Parsed<unknown> {
  const from = fromOf(value);
  if (from === undefined || !/[{}]/.test(from)) return { ok: true, value };
  const template = parseIdTemplate(from);
  const id = template.ok ? renderId(template.value, fill) : template;
  return id.ok ? { ok: true, value: { from: id.value } } : id;
}

// Id templates of sources: `ch-{stem}`, `promo-{first_frame_image.stem}-{prompt.index}`. Braces
// are never id characters, so no escaping is needed: a brace outside a placeholder is a mistake.
type Attribute = 'index' | 'stem';

export interface Placeholder {
  name: string;
  attribute?: Attribute | undefined;
  /** As written, for messages: `{prompt.index}`. */
  written: string;
}

export interface IdTemplate {
  text: string;
  pieces: (string | Placeholder)[];
}

export interface Complaint {
  expected: string;
  got: string;
  hint?: string | undefined;
}

export type Parsed<T> = { ok: true; value: T } | ({ ok: false } & Complaint);

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z]+))?\}/g;
const ATTRIBUTES: readonly string[] = ['index', 'stem'];
const MAX_ID_CHARS = 128;
const SAFE = /^[A-Za-z0-9._-]*$/;

/** Parses a template; a stray brace or an unknown `.attribute` is refused. */
export function parseIdTemplate(text: string): Parsed<IdTemplate> {
  const pieces: (string | Placeholder)[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const [written, name = '', attribute] = match;
    if (attribute !== undefined && !ATTRIBUTES.includes(attribute)) {
      return { ok: false, expected: 'placeholders {name}, {name.index} or {name.stem}', got: `${written} in ${formatGot(text)}` };
    }
    if (match.index > last) pieces.push(text.slice(last, match.index));
    pieces.push({ name, attribute: attribute as Attribute | undefined, written });
    last = match.index + written.length;
  }
  if (last < text.length) pieces.push(text.slice(last));
  const stray = pieces.find((piece) => typeof piece === 'string' && /[{}]/.test(piece));
  if (stray !== undefined) {
    return { ok: false, expected: 'an id template with placeholders like {stem} (letters, digits and _ inside braces)', got: formatGot(text), hint: 'every { needs its }' };
  }
  return { ok: true, value: { text, pieces } };
}

export function placeholders(template: IdTemplate): Placeholder[] {
  return template.pieces.filter((piece): piece is Placeholder => typeof piece !== 'string');
}

/** The first placeholder `allowed` refuses, as a complaint listing what the source offers. */
export function unknownPlaceholder(template: IdTemplate, offered: readonly string[], allowed: (p: Placeholder) => boolean): Complaint | undefined {
  const bad = placeholders(template).find((p) => !allowed(p));
  if (bad === undefined) return undefined;
  const near = closest(bad.name, offered, 1);
  const list = offered.map((name) => `{${name}}`).join(', ');
  return {
    expected: `placeholders this source fills (${list})`,
    got: `${bad.written} in ${formatGot(template.text)}`,
    hint:
      bad.attribute === 'index' && offered.includes(bad.name)
        ? 'only a list of a matrix has an index; {n} numbers the rows'
        : near.length > 0 && near[0] !== bad.name
          ? `did you mean {${near[0]}}?`
          : undefined,
  };
}

/** Letters, digits, `.`, `_`, `-` kept; accents dropped; every other run becomes one `-`. */
function idSafe(value: string): string {
  if (SAFE.test(value)) return value.replace(/^-+|-+$/g, '');
  return value
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** A path's file name without its last extension: `images/beach.png` → `beach`. */
export function stemOf(path: string): string {
  const name = path.split(/[\\/]/).pop() ?? path;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** What fills one placeholder: the field's value, and for a matrix list its 1-based index. */
export interface Filling {
  value: unknown;
  index?: number | undefined;
}

function pieceText(placeholder: Placeholder, filling: Filling): Parsed<string> {
  if (placeholder.attribute === 'index') return { ok: true, value: String(filling.index) };
  const { value } = filling;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    const hint = filling.index === undefined ? undefined : `use {${placeholder.name}.index}`;
    return { ok: false, expected: `a text or number value for ${placeholder.written}`, got: formatGot(value), hint };
  }
  const safe = idSafe(placeholder.attribute === 'stem' ? stemOf(String(value)) : String(value));
  if (safe === '') {
    const hint = filling.index === undefined ? 'use another placeholder' : `use {${placeholder.name}.index}`;
    return { ok: false, expected: `a value with letters or digits for ${placeholder.written}`, got: formatGot(value), hint };
  }
  return { ok: true, value: safe };
}

/** The id a template makes for one row, which must be a valid id; `fill` gives each placeholder's value. */
export function renderId(template: IdTemplate, fill: (p: Placeholder) => Filling | undefined): Parsed<string> & { placeholder?: Placeholder } {
  let id = '';
  for (const piece of template.pieces) {
    if (typeof piece === 'string') {
      id += piece;
      continue;
    }
    const filling = fill(piece);
    if (filling === undefined || (piece.attribute === 'index' && filling.index === undefined)) {
      return { ok: false, expected: `a value for ${piece.written} (id template ${formatGot(template.text)})`, got: 'nothing', hint: `give this row ${piece.name}` };
    }
    const text = pieceText(piece, filling);
    if (!text.ok) return { ...text, placeholder: piece };
    id += text.value;
  }
  if (!ID_PATTERN.test(id)) {
    const long = id.length > MAX_ID_CHARS;
    const got = `${long ? `${id.length} characters` : formatGot(id)} (from the id template ${formatGot(template.text)})`;
    return { ok: false, expected: COMMON_FIELDS.id.expected, got, hint: long ? 'use shorter values, or {n} instead of a long one' : undefined };
  }
  return { ok: true, value: id };
}
