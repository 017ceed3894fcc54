import { COMMON_FIELDS, ID_PATTERN } from '../fields.js';
import { formatGot, closest } from '../errors.js';

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
