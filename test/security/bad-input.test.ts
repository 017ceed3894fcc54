import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { UsageError } from '../../src/errors.js';
import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifest } from '../support/load-manifest.js';
import { hasStackTrace, ROOT, runCli, tempDir, type CliResult } from '../helpers/cli.js';
import { mainInProcess } from '../helpers/main-in-process.js';

/**
 * A bad-input corpus: mutations of the valid example manifests. Every one must end in exit 2
 * with a message that names the file (and a line and column for manifest problems), never a
 * stack trace, and never hang: each case runs under a per-test timeout.
 */

type Doc = Record<string, unknown> & { defaults?: Record<string, Record<string, unknown>>; jobs: Record<string, unknown>[] };

interface Case {
  name: string;
  /** The manifest text. */
  text: string;
}

const BASES = ['tts.yaml', 'video.yaml', 'mixed.yaml'] as const;
const baseText = (name: string): string => readFileSync(path.join(ROOT, 'manifests', name), 'utf8');
const baseDoc = (name: string): Doc => parse(baseText(name)) as Doc;

const SAMPLES: Record<string, unknown> = { string: 'x', number: 7, list: [1], map: { a: 1 }, null: null, bool: true };
const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value === 'object' ? 'map' : typeof value === 'boolean' ? 'bool' : typeof value;

function mutate(base: string, change: (doc: Doc) => void): string {
  const doc = baseDoc(base);
  change(doc);
  return stringify(doc, { lineWidth: 0 });
}

const INT_FIELDS = new Set(['sample_rate', 'width', 'height', 'steps', 'frames', 'fps', 'seed']);
const NUMBER_FIELDS = new Set([...INT_FIELDS, 'speed', 'guidance']);

function corpus(): Case[] {
  const cases: Case[] = [];
  for (const base of BASES) {
    const doc = baseDoc(base);
    // Wrong types for every field: top level, defaults, and each field of each job.
    for (const key of Object.keys(doc)) {
      for (const [kind, value] of Object.entries(SAMPLES)) {
        if (kind === kindOf(doc[key]) && key !== 'version') continue;
        if (key === 'budget' && kind === 'null') continue; // `budget:` empty is simply no budget? keep strict below
        cases.push({ name: `${base} ${key} as ${kind}`, text: mutate(base, (d) => void (d[key] = value)) });
      }
    }
    for (const [type, block] of Object.entries(doc.defaults ?? {})) {
      for (const field of Object.keys(block)) {
        for (const [kind, value] of Object.entries(SAMPLES)) {
          if (kind === kindOf(block[field])) continue;
          cases.push({ name: `${base} defaults.${type}.${field} as ${kind}`, text: mutate(base, (d) => void (d.defaults![type]![field] = value)) });
        }
        // Required parameters come from defaults: without them the jobs lack them.
        if (field !== 'negative_prompt') {
          cases.push({ name: `${base} defaults.${type}.${field} missing`, text: mutate(base, (d) => void delete d.defaults![type]![field]) });
        }
      }
    }
    doc.jobs.forEach((job, index) => {
      for (const field of Object.keys(job)) {
        for (const [kind, value] of Object.entries(SAMPLES)) {
          if (kind === kindOf(job[field])) continue;
          cases.push({ name: `${base} jobs[${index}].${field} as ${kind}`, text: mutate(base, (d) => void (d.jobs[index]![field] = value)) });
        }
        if (['type', 'text', 'text_file', 'prompt', 'first_frame_image'].includes(field)) {
          cases.push({ name: `${base} jobs[${index}].${field} missing`, text: mutate(base, (d) => void delete d.jobs[index]![field]) });
        }
      }
    });
    for (const key of ['version', 'jobs']) cases.push({ name: `${base} ${key} missing`, text: mutate(base, (d) => void delete d[key]) });
    cases.push({ name: `${base} jobs empty`, text: mutate(base, (d) => void (d.jobs = [])) });
    cases.push({ name: `${base} unknown top-level key`, text: mutate(base, (d) => void (d['budgte'] = 1)) });
    cases.push({ name: `${base} unknown job key`, text: mutate(base, (d) => void (d.jobs[0]!['voise'] = 'x')) });
    cases.push({ name: `${base} duplicate ids`, text: mutate(base, (d) => void (d.jobs[1]!['id'] = d.jobs[0]!['id'] ?? 'same', d.jobs[0]!['id'] = d.jobs[1]!['id'])) });

    // Huge, negative and not-a-number values.
    const numeric = (source: Record<string, unknown>, where: string, set: (field: string, value: unknown) => (d: Doc) => void) => {
      for (const field of Object.keys(source).filter((f) => NUMBER_FIELDS.has(f))) {
        for (const [label, value] of Object.entries({ '-1': -1, NaN: Number.NaN, '"NaN"': 'NaN', '"1e3"': '1e3', '-Infinity': -Infinity })) {
          cases.push({ name: `${base} ${where}.${field} = ${label}`, text: mutate(base, set(field, value)) });
        }
        if (INT_FIELDS.has(field)) {
          for (const [label, value] of Object.entries({ '1e308': 1e308, '2^53+2': 2 ** 53 + 2, '1.5': 1.5 })) {
            cases.push({ name: `${base} ${where}.${field} = ${label}`, text: mutate(base, set(field, value)) });
          }
        }
      }
    };
    for (const [type, block] of Object.entries(doc.defaults ?? {})) {
      numeric(block, `defaults.${type}`, (field, value) => (d) => void (d.defaults![type]![field] = value));
    }
    numeric({ budget: 1 }, 'top', (_f, value) => (d) => void (d['budget'] = value));
    cases.push({ name: `${base} budget = 1e400`, text: baseText(base).replace(/^budget: .*$/m, 'budget: 1e400') });
    cases.push({ name: `${base} version = 2`, text: baseText(base).replace(/^version: 1$/m, 'version: 2') });
    cases.push({ name: `${base} 1,000,000-char id`, text: mutate(base, (d) => void (d.jobs[0]!['id'] = 'a'.repeat(1_000_000))) });
    cases.push({ name: `${base} 1,000,000-char key`, text: mutate(base, (d) => void (d.jobs[0]!['k'.repeat(1_000_000)] = 1)) });
    cases.push({ name: `${base} 1,000,000-char format`, text: mutate(base, (d) => void (d.jobs[0]!['type'] = 't'.repeat(1_000_000))) });

    // Odd Unicode where only plain names are allowed.
    const odd = { RTL: 'a\u202eb', 'zero-width': 'a\u200bb', emoji: 'clip-😀', NUL: 'a\u0000b', 'lone surrogate': 'a\ud800b', BOM: '\ufeffa', ANSI: 'a\u001b[31mb' };
    for (const [label, value] of Object.entries(odd)) {
      cases.push({ name: `${base} id with ${label}`, text: mutate(base, (d) => void (d.jobs[0]!['id'] = value)) });
      cases.push({ name: `${base} type with ${label}`, text: mutate(base, (d) => void (d.jobs[0]!['type'] = `txt2audio${value}`)) });
      cases.push({ name: `${base} key with ${label}`, text: mutate(base, (d) => void (d.jobs[0]![`model${value}`] = 'x')) });
    }
    cases.push({ name: `${base} lone surrogate escaped in YAML id`, text: baseText(base).replace(/^( {2}- )(id|type): .*$/m, '$1id: "\\ud800"') });

    // Broken YAML, as people break it.
    const text = baseText(base);
    cases.push({ name: `${base} unclosed quote`, text: text.replace(/"([^"\n]*)"/, '"$1') });
    cases.push({ name: `${base} unclosed flow map`, text: text.replace(/^(defaults:\n {2}\w+: \{[^}\n]*)\}/m, '$1').replace(/(\w+: )\{([^}\n]*)\}/, '$1{$2') });
    cases.push({ name: `${base} bad indentation`, text: text.replace(/\n {4}type:/, '\n   type:') });
    cases.push({ name: `${base} tab indentation`, text: text.replace(/\n {4}type:/, '\n\ttype:') });
    cases.push({ name: `${base} duplicate key`, text: text.replace(/\n( {4})type: (\w+)/, '\n$1type: $2\n$1type: $2') });
    cases.push({ name: `${base} duplicate top-level key`, text: `${text}version: 1\n` });
    cases.push({ name: `${base} two documents`, text: `${text}---\nversion: 1\n` });
    cases.push({ name: `${base} truncated in half`, text: text.slice(0, Math.floor(text.length / 2)) + '\n  - { id: "' });
    cases.push({ name: `${base} not UTF-8`, text: text.replace('jobs:', 'jobs:\u0000') });
  }

  const tts = baseText('tts.yaml');
  const textValue = /^ {4}text: .*$/m;
  // Deep nesting in a field: 5,000 levels, flow and block.
  cases.push({ name: 'text as a 5,000-level list', text: tts.replace(textValue, `    text: ${'['.repeat(5000)}${']'.repeat(5000)}`) });
  cases.push({ name: 'text as a 5,000-level map', text: tts.replace(textValue, `    text: ${'{a: '.repeat(5000)}1${'}'.repeat(5000)}`) });
  cases.push({
    name: 'text as a 5,000-level block list',
    text: tts.replace(textValue, `    text:\n${Array.from({ length: 5000 }, (_, i) => `${' '.repeat(6 + 2 * i)}-`).join('\n')} 1`),
  });
  cases.push({ name: 'defaults as a 5,000-level list', text: tts.replace(/^defaults:\n.*$/m, `defaults: ${'['.repeat(5000)}${']'.repeat(5000)}`) });
  // Billion laughs: nine levels of nine aliases (387,420,489 strings once expanded).
  const laughs = ['x-lol: &l0 "lol"'];
  for (let level = 1; level <= 9; level += 1) laughs.push(`x-l${level}: &l${level} [${Array(9).fill(`*l${level - 1}`).join(', ')}]`);
  cases.push({ name: 'billion laughs at the top', text: `${laughs.join('\n')}\n${tts}` });
  cases.push({ name: 'billion laughs in a field', text: tts.replace(textValue, `    text: &t0 lol\n    x: ${laughs.slice(1).join(' ')}`) });
  cases.push({
    name: 'billion laughs in defaults',
    text: tts.replace(/^defaults:$/m, `${laughs.join('\n')}\ndefaults:`).replace(/^( {4}speed: )1\.2$/m, '$1*l9'),
  });
  // A text mutation whose pattern did not match would test the valid original: leave it out.
  const originals = new Set(BASES.map(baseText));
  return cases.filter((c) => !originals.has(c.text));
}

/** Cases that need files beside the manifest: written into the working folder by beforeAll. */
const FILE_CASES: Case[] = [
  { name: 'a 50 MB text_file', text: baseText('tts.yaml').replace('scripts/chapter-01.txt', 'big/fifty-mb.txt') },
  { name: 'text_file is a directory', text: baseText('tts.yaml').replace('scripts/chapter-01.txt', 'scripts') },
  { name: 'text_file is missing', text: baseText('tts.yaml').replace('scripts/chapter-01.txt', 'scripts/nope.txt') },
  { name: 'text_file is not UTF-8', text: baseText('tts.yaml').replace('scripts/chapter-01.txt', 'big/latin1.txt') },
  { name: 'text_file is empty', text: baseText('tts.yaml').replace('scripts/chapter-01.txt', 'big/empty.txt') },
  { name: 'an image that is really text, named .png', text: baseText('video.yaml').replace('images/forest.png', 'big/fake.png') },
  { name: 'an image that is a directory', text: baseText('video.yaml').replace('images/forest.png', 'images') },
  { name: 'an image over 10 MB', text: baseText('video.yaml').replace('images/forest.png', 'big/huge.png') },
  { name: 'an empty image', text: baseText('video.yaml').replace('images/forest.png', 'big/empty.txt') },
];

let dir: string;
let cleanup: () => Promise<void>;
let counter = 0;

function writeCase(c: Case): string {
  counter += 1;
  const file = path.join(dir, `case-${counter}.yaml`);
  // "not UTF-8" cases are written as latin1 so their bytes really are not UTF-8.
  writeFileSync(file, c.name.endsWith('not UTF-8') ? Buffer.from(c.text.replace('\u0000', '\u00e9'), 'latin1') : c.text);
  return file;
}

async function refusal(file: string): Promise<ManifestError | UsageError> {
  const outcome = await loadManifest(file).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (outcome === undefined) throw new Error(`${file} was accepted`);
  if (!(outcome instanceof ManifestError) && !(outcome instanceof UsageError)) throw outcome as Error;
  return outcome;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('mediabatch-corpus-'));
  cpSync(path.join(ROOT, 'manifests', 'images'), path.join(dir, 'images'), { recursive: true });
  cpSync(path.join(ROOT, 'manifests', 'scripts'), path.join(dir, 'scripts'), { recursive: true });
  mkdirSync(path.join(dir, 'big'));
  writeFileSync(path.join(dir, 'big', 'fifty-mb.txt'), Buffer.alloc(50 * 1024 * 1024, 'a'));
  writeFileSync(path.join(dir, 'big', 'latin1.txt'), Buffer.from('caf\u00e9 cr\u00e8me', 'latin1'));
  writeFileSync(path.join(dir, 'big', 'empty.txt'), '');
  writeFileSync(path.join(dir, 'big', 'fake.png'), 'this is text, not a picture\n');
  const png = readFileSync(path.join(dir, 'images', 'forest.png'));
  writeFileSync(path.join(dir, 'big', 'huge.png'), Buffer.concat([png, Buffer.alloc(11 * 1024 * 1024)]));
});
afterAll(async () => cleanup());

/** Built once for both describes: a few hundred YAML mutations, some of a million characters. */
const CASES = [...corpus(), ...FILE_CASES];

describe('bad-input corpus, in-process through loadManifest', () => {
  const cases = CASES;

  it('has a corpus worth the name', () => {
    expect(cases.length).toBeGreaterThan(300);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: exit 2, located, no stack trace', { timeout: 10_000 }, async (_name, c) => {
    const file = writeCase(c);
    const error = await refusal(file);
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(file);
    expect(hasStackTrace(error.message)).toBe(false);
    if (error instanceof ManifestError) {
      expect(error.issues.length).toBeGreaterThan(0);
      for (const issue of error.issues) {
        expect(issue.file).toBe(file);
        expect(issue.line).toBeGreaterThanOrEqual(1);
        expect(issue.col).toBeGreaterThanOrEqual(1);
      }
      expect(error.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+ `));
      // One readable line per issue, whatever the input held.
      expect(error.message.split('\n')).toHaveLength(error.issues.length + 1);
      for (const line of error.message.split('\n')) expect(line.length).toBeLessThan(2000);
    }
  });
});

describe('bad-input corpus, a representative dozen through the CLI', () => {
  const pick = (names: string[]): Case[] =>
    names.map((name) => {
      const found = CASES.find((c) => c.name === name);
      if (found === undefined) throw new Error(`no case ${name}`);
      return found;
    });
  const chosen = pick([
    'tts.yaml defaults.txt2audio.speed as string',
    'video.yaml jobs[0].first_frame_image missing',
    'mixed.yaml jobs as map',
    'video.yaml defaults.img2video.frames = 1e308',
    'tts.yaml id with ANSI',
    'mixed.yaml tab indentation',
    'tts.yaml unclosed quote',
    'video.yaml duplicate key',
    'text as a 5,000-level list',
    'billion laughs at the top',
    'a 50 MB text_file',
    'an image that is really text, named .png',
    'text_file is a directory',
    'mixed.yaml not UTF-8',
  ]);

  /** What `validate --offline` of a refused manifest shows: exit 2, the file located on stderr, nothing else. */
  function expectRefused(result: Pick<CliResult, 'code' | 'stdout' | 'stderr'>, file: string, label: string): void {
    expect(result.code, label).toBe(2);
    expect(result.stdout, label).toBe('');
    expect(result.stderr, label).toContain(file);
    expect(result.stderr, label).toMatch(/:\d+:\d+ /);
    expect(hasStackTrace(result.stderr), label).toBe(false);
    expect(result.stderr, label).not.toMatch(/bug in mediabatch/);
    // Nothing from the manifest reaches the terminal as a control sequence.
    expect(result.stderr, label).not.toContain('\u001b');
  }

  // The CLI's main in this process renders each refusal as the process does; the spawns below show the process's exit.
  it('each ends in exit 2 naming the file, one line per problem, no stack trace', async () => {
    for (const c of chosen) {
      const file = writeCase(c);
      const result = await mainInProcess(['validate', file, '--offline']);
      expectRefused(result, file, `${c.name}: ${result.stderr}`);
    }
  });

  it('through the built CLI: the process exits 2, for a refused manifest and for a directory given as one', async () => {
    const ansi = chosen.find((c) => c.name === 'tts.yaml id with ANSI')!;
    const file = writeCase(ansi);
    const [refused, asDir] = await Promise.all([
      runCli(['validate', file, '--offline'], { timeoutMs: 20_000 }),
      runCli(['validate', dir, '--offline'], { timeoutMs: 20_000 }),
    ]);
    expectRefused(refused, file, refused.stderr);
    expect(asDir.code).toBe(2);
    expect(asDir.stderr).toContain('it is a directory');
    expect(hasStackTrace(asDir.stderr)).toBe(false);
  });
});
