import { existsSync } from 'node:fs';
import { copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../helpers/cli.js';
import { exec, installPacked, sha256 } from '../helpers/installed-package.js';

const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The README's example of use from code: the TypeScript block of its "Use it from code" section. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## Use it from code\n')[1] ?? '';
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README.md: no ```ts block under "## Use it from code"');
  return block;
}

// A strict consumer of today's TypeScript. skipLibCheck, as most projects set it: checking every
// declaration of the dependencies (zod's among them) takes many times longer, and the consumer's
// expected errors (its `misuses`) fail to appear if a type it uses from the package is missing or `any`.
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2023'],
    types: ['node'],
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    outDir: 'dist',
  },
  files: ['index.mts', 'readme.mts'],
};

describe('mediabatch as an installed package, used from TypeScript', () => {
  let work: Awaited<ReturnType<typeof tempDir>>;
  let project = '';

  beforeAll(async () => {
    if (!existsSync(path.join(ROOT, 'dist', 'src', 'lib', 'index.d.ts'))) throw new Error('no build: run npm run build first');
    work = await tempDir('mediabatch-consumer-');
    project = await installPacked(work.dir, ['@types/node']);
    await copyFile(path.join(ROOT, 'test', 'fixtures', 'consumer', 'index.mts'), path.join(project, 'index.mts'));
    await writeFile(path.join(project, 'readme.mts'), await readmeExample());
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  }, 120_000);

  afterAll(async () => {
    await work?.cleanup();
  });

  it('installs offline from the tarball, with the native SQLite binding as built here, not compiled again', async () => {
    const installed = JSON.parse(await readFile(path.join(project, 'node_modules', 'mediabatch', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(installed['exports']).toEqual({ '.': { types: './dist/src/lib/index.d.ts', default: './dist/src/lib/index.js' }, './package.json': './package.json' });
    expect(existsSync(path.join(project, 'node_modules', 'mediabatch', 'dist', 'src', 'lib', 'index.d.ts'))).toBe(true);
    const binding = path.join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    expect(await sha256(path.join(project, 'node_modules', binding))).toBe(await sha256(path.join(ROOT, 'node_modules', binding)));
  });

  it('type-checks a strict consumer (module nodenext) and the README example against the shipped declarations', async () => {
    const checked = await exec(process.execPath, [TSC, '-p', project], { cwd: project }).catch((error: { stdout?: string }) => error);
    expect('stdout' in checked ? checked.stdout : '').toBe('');
    expect(existsSync(path.join(project, 'dist', 'index.mjs'))).toBe(true);
  }, 60_000);

  it('runs a batch against the simulator: results on disk, events for every job, abort then resume with nothing sent twice, silence', async () => {
    const ran = await exec(process.execPath, ['dist/index.mjs'], { cwd: project });
    expect({ stdout: ran.stdout, stderr: ran.stderr }).toEqual({ stdout: '', stderr: '' });
    const result = JSON.parse(await readFile(path.join(project, 'result.json'), 'utf8')) as Record<string, unknown>;
    const ids = Array.from({ length: 8 }, (_, i) => `line-${i}`);
    // Stopped: nothing in doubt or caught mid-submit, some jobs never sent.
    expect(result['stopped']).toMatchObject({ exitCode: 130, counts: { in_doubt: 0, submitting: 0 } });
    expect(result['sentBeforeResume']).toSatisfy((sent: number) => sent > 0 && sent < 8);
    expect(result['resumed']).toMatchObject({ exitCode: 0, counts: { done: 8, in_doubt: 0, failed: 0 } });
    expect({ accepted: result['accepted'], duplicates: result['duplicates'] }).toEqual({ accepted: 8, duplicates: 0 });
    const events = result['events'] as { kind: string; id?: string; priceMicro?: number }[];
    const idsOf = (kind: string) => events.filter((event) => event.kind === kind).map((event) => event.id).sort();
    expect(idsOf('submitted')).toEqual(ids);
    expect(idsOf('done')).toEqual(ids);
    // Each job's price came with its submit: together, what the ledger counts as spent.
    const prices = events.filter((event) => event.kind === 'submitted').map((event) => event.priceMicro ?? 0);
    expect(prices.reduce((a, b) => a + b, 0)).toBe((result['resumed'] as { spentMicro: number }).spentMicro);
    expect(prices.every((price) => price > 0)).toBe(true);
    expect(result['files']).toEqual(ids.map((id) => `${id}.wav`));
    expect(result['invalid']).toMatchObject({ exitCode: 2, fields: expect.arrayContaining(['speed']) });
  }, 60_000);

  it('the README example runs as written', async () => {
    const ran = await exec(process.execPath, ['dist/readme.mjs'], { cwd: project });
    const out = path.join(project, 'show.out');
    expect(ran.stderr).toBe('');
    expect(ran.stdout.trim().split('\n').sort()).toEqual([
      '2 done, exit code 0',
      `goodbye: ${path.join(out, 'goodbye.wav')}`,
      `welcome: ${path.join(out, 'welcome.wav')}`,
    ]);
    expect((await readdir(out)).sort()).toEqual(['goodbye.wav', 'welcome.wav']);
  }, 60_000);
});
