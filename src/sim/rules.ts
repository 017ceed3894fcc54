/**
 * Laravel-style field rules: each records its message in an error bag and returns the parsed
 * value or undefined. Messages follow Laravel's wording, so clients see what the service sends.
 */

/** A form value: JSON scalars, multipart strings, or multipart files. */
export type FieldValue = string | number | boolean | null | undefined | Blob | object;
export type Fields = Record<string, FieldValue>;

export class ErrorBag {
  readonly errors: Record<string, string[]> = {};

  add(field: string, message: string): undefined {
    (this.errors[field] ??= []).push(message);
    return undefined;
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  /** Laravel's summary: the first message, plus how many more there are. */
  message(): string {
    const all = Object.values(this.errors).flat();
    const first = all[0] ?? 'The given data was invalid.';
    const more = all.length - 1;
    return more > 0 ? `${first} (and ${more} more error${more === 1 ? '' : 's'})` : first;
  }
}

export function attribute(field: string): string {
  return field.replace(/_/g, ' ');
}

function isBlank(value: FieldValue): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

export function requiredString(bag: ErrorBag, fields: Fields, field: string): string | undefined {
  const value = fields[field];
  if (isBlank(value)) return bag.add(field, `The ${attribute(field)} field is required.`);
  if (typeof value !== 'string') return bag.add(field, `The ${attribute(field)} field must be a string.`);
  return value;
}

export function optionalString(bag: ErrorBag, fields: Fields, field: string): string | undefined {
  const value = fields[field];
  if (isBlank(value)) return undefined;
  if (typeof value !== 'string') return bag.add(field, `The ${attribute(field)} field must be a string.`);
  return value;
}

export interface NumberRule {
  integer?: boolean;
  min?: number | undefined;
  max?: number | undefined;
}

function toNumber(value: FieldValue): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** A required number (numeric strings accepted, as Laravel does for form fields) within bounds. */
export function requiredNumber(bag: ErrorBag, fields: Fields, field: string, rule: NumberRule = {}): number | undefined {
  const raw = fields[field];
  const name = attribute(field);
  if (isBlank(raw)) return bag.add(field, `The ${name} field is required.`);
  const value = toNumber(raw);
  if (value === undefined) return bag.add(field, `The ${name} field must be ${rule.integer ? 'an integer' : 'a number'}.`);
  if (rule.integer && !Number.isInteger(value)) return bag.add(field, `The ${name} field must be an integer.`);
  const { min, max } = rule;
  if (min !== undefined && max !== undefined && min === max && value !== min) {
    return bag.add(field, `The ${name} field must be ${min}.`);
  }
  if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
    if (min !== undefined && max !== undefined) return bag.add(field, `The ${name} field must be between ${min} and ${max}.`);
    if (min !== undefined) return bag.add(field, `The ${name} field must be at least ${min}.`);
    return bag.add(field, `The ${name} field must not be greater than ${max}.`);
  }
  return value;
}

export function oneOf<T extends string | number>(bag: ErrorBag, field: string, value: T | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  return allowed.includes(value) ? value : bag.add(field, `The selected ${attribute(field)} is invalid.`);
}

/** Counts characters as PHP's mb_strlen does: code points, not UTF-16 units. */
export function charCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
