import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, test } from 'vitest';
import { manifestJsonSchema, SCHEMA_FILE } from '../../src/manifest/schema.js';
import { FIXTURES, rejection } from './helpers.js';

/**
 * The committed JSON Schema (what an editor checks a manifest with) against the validator: what
 * the validator rejects, the schema rejects, with one error for each mistake; what it accepts,
 * the schema accepts. Checked with ajv, a JSON Schema validator of its own.
 */
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);

/** The manifest as JSON data, as an editor's schema check sees it (`.inf` and `.nan` are not JSON: null). */
function asJson(file: string): unknown {
  return JSON.parse(JSON.stringify(parse(readFileSync(file, 'utf8'), { merge: true }))) as unknown;
}

/**
 * ajv's errors as an editor shows mistakes: an `if` that failed only points at the errors of its
 * `then`, and a `oneOf` that failed is one mistake, whatever its branches said.
 */
function mistakes(errors: readonly ErrorObject[]): ErrorObject[] {
  const oneOfs = errors.filter((error) => error.keyword === 'oneOf');
  return errors
    .filter((error) => error.keyword !== 'if')
    .filter((error) => !oneOfs.some((one) => error !== one && error.instancePath === one.instancePath && error.schemaPath.startsWith(`${one.schemaPath}/`)));
}

function schemaMistakes(file: string): ErrorObject[] {
  return validate(asJson(file)) ? [] : mistakes(validate.errors ?? []);
}

/** Invalid fixtures, with how many of the validator's problems need more than a schema (files, unique ids). */
const INVALID: Record<string, { onlyTheValidator: number; why?: string }> = {
  'missing-fields': { onlyTheValidator: 0 },
  'text-source': { onlyTheValidator: 0 },
  numbers: { onlyTheValidator: 0 },
  'job-shapes': { onlyTheValidator: 0 },
  'defaults-invalid': { onlyTheValidator: 0 },
  'unknown-keys': { onlyTheValidator: 0 },
  'budget-negative': { onlyTheValidator: 0 },
  'budget-quoted': { onlyTheValidator: 0 },
  'version-missing': { onlyTheValidator: 0 },
  'version-wrong': { onlyTheValidator: 0 },
  'empty-jobs': { onlyTheValidator: 0 },
  ids: { onlyTheValidator: 2, why: 'two ids repeat another job’s' },
  'many-problems': { onlyTheValidator: 2, why: 'an image that is not one by its bytes, a repeated id' },
  images: { onlyTheValidator: 4, why: 'files missing, a folder, not an image' },
  'text-files': { onlyTheValidator: 4, why: 'files missing, a folder, not UTF-8, empty' },
};

describe(`${SCHEMA_FILE} is as strict as the validator`, () => {
  test('the committed schema is the generated one', () => {
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(manifestJsonSchema());
  });

  test.each(Object.entries(INVALID))('%s: rejected, one error for each mistake the schema can see', async (name, { onlyTheValidator }) => {
    const file = `${FIXTURES}/invalid/${name}.yaml`;
    const issues = (await rejection(file)).issues;
    const found = schemaMistakes(file);
    expect(found.length, JSON.stringify(found, null, 1)).toBe(issues.length - onlyTheValidator);
  });

  test('speech: text or text_file, exactly one; a job of one kind may not carry another kind’s fields', () => {
    const check = (job: object) => {
      const manifest = { version: 1, defaults: { txt2audio: { model: 'Kokoro', voice: 'af_sky', lang: 'en-us', speed: 1, format: 'mp3', sample_rate: 24000 } }, jobs: [job] };
      return validate(manifest) ? [] : mistakes(validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`);
    };
    expect(check({ type: 'txt2audio', text: 'hi' })).toEqual([]);
    expect(check({ type: 'txt2audio', text_file: 'a.txt' })).toEqual([]);
    expect(check({ type: 'txt2audio' })).toEqual(['/jobs/0 oneOf {"passingSchemas":null}']);
    expect(check({ type: 'txt2audio', text: 'hi', text_file: 'a.txt' })).toEqual(['/jobs/0 oneOf {"passingSchemas":[0,1]}']);
    expect(check({ type: 'txt2audio', text: 'hi', prompt: 'waves' })).toEqual(['/jobs/0 additionalProperties {"additionalProperty":"prompt"}']);
    expect(check({ type: 'txt2audio', text: 'hi', sped: 1 })).toEqual(['/jobs/0 additionalProperties {"additionalProperty":"sped"}']);
  });

  test('image to video needs its first frame; a field defaults may give is required only when they do not', () => {
    const video = { model: 'Ltxv_13B_0_9_8_Distilled_FP8', width: 768, height: 432, steps: 1, frames: 120, fps: 30, guidance: 0, seed: 42 };
    const errors = (manifest: object) =>
      validate(manifest) ? [] : mistakes(validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`);
    const job = { type: 'img2video', prompt: 'waves' };
    expect(errors({ version: 1, defaults: { img2video: video }, jobs: [job] })).toEqual(['/jobs/0 required {"missingProperty":"first_frame_image"}']);
    expect(errors({ version: 1, defaults: { img2video: video }, jobs: [{ ...job, first_frame_image: 'a.png' }] })).toEqual([]);
    expect(errors({ version: 1, jobs: [{ ...job, first_frame_image: 'a.png', ...video }] })).toEqual([]);
    const { seed: _seed, ...noSeed } = video;
    expect(errors({ version: 1, defaults: { img2video: noSeed }, jobs: [{ ...job, first_frame_image: 'a.png' }] })).toEqual([
      '/jobs/0 required {"missingProperty":"seed"}',
    ]);
  });

  test('every example manifest and valid fixture passes', () => {
    const files = [
      ...readdirSync('manifests').filter((name) => name.endsWith('.yaml')).map((name) => `manifests/${name}`),
      ...readdirSync(`${FIXTURES}/valid`).filter((name) => name.endsWith('.yaml')).map((name) => `${FIXTURES}/valid/${name}`),
    ];
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect(schemaMistakes(file), file).toEqual([]);
  });
});
