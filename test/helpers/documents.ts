import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { expect } from 'vitest';
import { ROOT } from './cli.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

/**
 * Checks a document the CLI wrote against its committed JSON Schema (docs/schemas/<name>.schema.json),
 * with ajv, and that every number in it is money as mediabatch's documents promise: at most 6
 * decimals, never an exponent or float noise. Returns the document.
 */
export function expectDocument<T = Record<string, unknown>>(name: 'estimate' | 'run' | 'status' | 'validate' | 'models' | 'error' | 'sim-stats', text: string): T {
  // The simulator's balance is the simulated service's, to its precision (8 decimals), not ours.
  const moneyRule = name !== 'sim-stats';
  let validate = compiled.get(name);
  if (validate === undefined) {
    validate = ajv.compile(JSON.parse(readFileSync(path.join(ROOT, 'docs/schemas', `${name}.schema.json`), 'utf8')) as object);
    compiled.set(name, validate);
  }
  const document = JSON.parse(text) as unknown;
  expect(validate(document) ? [] : validate.errors, `${name} document against docs/schemas/${name}.schema.json`).toEqual([]);
  for (const value of moneyRule ? numbersIn(document) : []) {
    expect(String(value), 'a number in a document').not.toMatch(/e/i);
    expect(Math.abs(value * 1e6 - Math.round(value * 1e6)), `${value} has more than 6 decimals`).toBeLessThan(1e-6);
  }
  return document as T;
}

function* numbersIn(value: unknown): Generator<number> {
  if (typeof value === 'number') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* numbersIn(item);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) yield* numbersIn(item);
}
