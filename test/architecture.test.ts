import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOB_TYPES } from '../src/jobs/index.js';
import { ROOT } from './helpers/cli.js';

/** docs/architecture.md: the folders are the architecture, and imports point one way. */
const ALLOWED: Record<string, string[]> = {
  cli: ['lib', 'runner', 'jobs', 'manifest', 'api', 'pricing', 'store', 'report', 'sim', 'errors'],
  // The library: what the CLI and a program share, over the runner; it prints nothing and reads no environment.
  lib: ['runner', 'jobs', 'manifest', 'api', 'pricing', 'store', 'report', 'sim', 'errors'],
  runner: ['jobs', 'manifest', 'api', 'pricing', 'store', 'report', 'webhooks', 'errors'],
  manifest: ['jobs', 'api', 'errors'],
  pricing: ['jobs', 'manifest', 'api', 'errors'],
  report: ['jobs', 'pricing', 'errors'],
  store: ['jobs', 'errors'],
  jobs: ['api', 'errors'],
  api: ['errors'],
  // The receiver: HTTP, signatures, the delivery's shape. What a delivery does is the runner's.
  webhooks: ['errors'],
  sim: ['api'],
};

/** Each outside library lives in one folder. */
const LIBRARY_HOME: Record<string, string> = {
  undici: 'api',
  'p-retry': 'api',
  'better-sqlite3': 'store',
  yaml: 'manifest',
  yargs: 'cli',
  'log-update': 'cli',
  limiter: 'runner',
  'csv-stringify': 'report',
  'csv-parse': 'manifest',
  tinyglobby: 'manifest',
  'music-metadata': 'errors',
  // An image's sides, in a module directly in src/, which the manifest and the simulator share.
  'image-size': 'errors',
  mp4box: 'errors',
};

/**
 * Libraries only tests and benchmarks use (devDependencies): the program never loads them.
 * playwright-core drives the browser tests' Chromium (test/helpers/browser.ts, bench/chromium.ts).
 */
const TEST_ONLY = ['playwright-core', 'vitest', 'typescript'];

/**
 * The only lines outside src/jobs and src/sim that may name a kind, each once: shipped migrations
 * are never edited (a new ledger replays them), and migration 1 made `type` a CHECK of the two
 * kinds of its day, which migration 5 dropped. Nothing is ever added here.
 */
const FROZEN_KIND_NAMES = [
  { file: 'src/store/sqlite/schema.ts', line: "type           TEXT NOT NULL CHECK (type IN ('txt2audio','img2video'))," },
];

interface Import {
  file: string;
  from: string;
  specifier: string;
  target: string;
  /** The imported file relative to src/, for a relative specifier. */
  targetFile: string | undefined;
  typeOnly: boolean;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full) : [full];
  });
}

function sourceFiles(dir: string): string[] {
  return files(dir).filter((file) => file.endsWith('.ts'));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const relative = path.relative(path.join(ROOT, 'src'), file);
  const from = relative.includes(path.sep) ? (relative.split(path.sep)[0] ?? '') : 'errors';
  const found: Import[] = [];
  // Static imports and re-exports, side-effect imports, and `import()`: a lazy import still loads.
  const statements = /^(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s+'([^']+)'|^import\s+'([^']+)'|\bimport\('([^']+)'\)/gms;
  for (const match of text.matchAll(statements)) {
    const specifier = match[3] ?? match[4] ?? match[5] ?? '';
    const inSrc = specifier.startsWith('.') ? path.relative(path.join(ROOT, 'src'), path.resolve(path.dirname(file), specifier)) : undefined;
    const target = inSrc !== undefined
      ? (inSrc.split(path.sep)[0] ?? '').replace(/\.js$/, '')
      : (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? ''));
    // `import { type A, type B } from` loads nothing either.
    const names = /^\{([^}]*)\}$/.exec(match[2]?.trim() ?? '')?.[1]?.split(',').map((n) => n.trim()).filter(Boolean);
    const typeOnly = match[1] !== undefined || (names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type ')));
    found.push({ file: relative, from, specifier, target, targetFile: inSrc?.replace(/\.js$/, '.ts'), typeOnly });
  }
  return found;
}

/** Tarjan's strongly connected components of a graph given as edges per node. */
function stronglyConnected(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = member === node ? undefined : stack.pop()) {
      onStack.delete(member);
      component.push(member);
    }
    components.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

const imports = sourceFiles(path.join(ROOT, 'src')).flatMap(importsOf);

describe('architecture', () => {
  it('finds the imports it checks', () => {
    expect(imports.length).toBeGreaterThan(100);
  });

  it('imports between folders point one way', () => {
    const wrong = imports
      .filter((i) => i.target in ALLOWED || i.target === 'errors')
      .filter((i) => i.target !== i.from && !(ALLOWED[i.from] ?? []).includes(i.target))
      .map((i) => `${i.file} imports ${i.target}`);
    expect(wrong).toEqual([]);
  });

  it('no file of src imports itself, directly or through others, at run time', () => {
    // A cycle makes one of its files run before what it imports is initialised; types are erased.
    const edges = new Map<string, string[]>();
    for (const i of imports) {
      const next = edges.get(i.file) ?? [];
      if (!i.typeOnly && i.targetFile !== undefined) next.push(i.targetFile);
      edges.set(i.file, next);
    }
    const cycles = stronglyConnected(edges)
      .filter((component) => component.length > 1 || edges.get(component[0] ?? '')?.includes(component[0] ?? ''))
      .map((component) => `import cycle: ${component.join(', ')}`);
    expect(cycles).toEqual([]);
  });

  it('the simulator shares only the facts with the client: its types', () => {
    const wrong = imports
      .filter((i) => i.from === 'sim' && i.target === 'api')
      .filter((i) => !i.typeOnly)
      .map((i) => `${i.file} imports ${i.specifier}`);
    expect(wrong).toEqual([]);
  });

  it('a job kind is named only in its two files (src/jobs/<kind>.ts, src/sim/kinds/) and the two lists', () => {
    // A branch on `job.type` elsewhere would send a new kind down another kind's path without a
    // compiler error, and a kind named in the ledger's schema would make a new kind a migration;
    // every kind-specific answer comes from the registry's `kindOf(job.type)` or the simulator's
    // `simKind(type)`. Comments too: a comment that names a kind is one more file to edit when
    // kinds change.
    const kinds = new RegExp(`\\b(${JOB_TYPES.join('|')})\\b`);
    const own = new RegExp(`[\\\\/]src[\\\\/](jobs[\\\\/](index|${JOB_TYPES.join('|')})\\.ts|sim[\\\\/]kinds[\\\\/])`);
    const frozen = [...FROZEN_KIND_NAMES];
    const wrong = files(path.join(ROOT, 'src'))
      .filter((file) => !own.test(file))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ file: path.relative(ROOT, file).split(path.sep).join('/'), line: line.trim(), at: i + 1 }))
          .filter(({ line }) => kinds.test(line))
          .filter(({ file, line }) => {
            const exempt = frozen.findIndex((f) => f.file === file && f.line === line);
            if (exempt < 0) return true;
            frozen.splice(exempt, 1); // each once: the same line in a new migration is named
            return false;
          })
          .map(({ file, at, line }) => `${file}:${at}: ${line}`),
      );
    expect(wrong).toEqual([]);
    // An exemption whose line is gone is removed from the list, not kept for a later use.
    expect(frozen).toEqual([]);
  });

  it('the memory ledger, test code, builds on the ledger interface and the job states alone', () => {
    // It implements `Ledger` as a second process would see it; the program never opens it, so it
    // lives in test/support/, and the first import of runner, cli or SQLite code would make it a
    // copy of what it is meant to check.
    const dir = path.join(ROOT, 'test', 'support', 'memory-ledger');
    const wrong = sourceFiles(dir)
      .flatMap(importsOf)
      .filter((i) => !i.specifier.startsWith('./'))
      .filter((i) => {
        const file = i.targetFile ?? '';
        const leaf = file !== '' && !file.includes('/');
        return !(leaf || file.startsWith('jobs/') || ['store/ledger.ts', 'store/index.ts'].includes(file));
      })
      .map((i) => `test/support/memory-ledger/${path.basename(i.file)} imports ${i.specifier}`);
    expect(sourceFiles(dir).length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });

  it('test-only libraries stay out of src', () => {
    const wrong = imports.filter((i) => TEST_ONLY.includes(i.target)).map((i) => `${i.file} imports ${i.target}`);
    expect(wrong).toEqual([]);
  });

  it('each outside library is used from its one folder', () => {
    const wrong = imports
      .filter((i) => i.target in LIBRARY_HOME && LIBRARY_HOME[i.target] !== i.from)
      .map((i) => `${i.file} imports ${i.target}`);
    expect(wrong).toEqual([]);
  });
});
