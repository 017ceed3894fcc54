import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';

export const exec = promisify(execFile);

const MODULES = path.join(ROOT, 'node_modules');

/**
 * This package as a user gets it: `npm pack` of the built tree (no scripts: the build is the
 * suite's to run first), installed into a fresh project at `project` with no network. The
 * tarball's dependencies are copied from this repository's node_modules beforehand (npm lists
 * them: `npm ls --omit=dev`), with their command links, so that `npm install --offline` finds
 * every one already in place and only unpacks the tarball; `--ignore-scripts` keeps
 * better-sqlite3's native build as it was built here, never compiled again. `devTypes` (such as
 * `@types/node`) are copied in the same way for the project's type check.
 */
export async function installPacked(workDir: string, devTypes: readonly string[]): Promise<string> {
  const pack = ['pack', '--ignore-scripts', '--silent', '--pack-destination', workDir];
  const packed = await exec('npm', pack, { cwd: ROOT });
  const tarball = path.join(workDir, packed.stdout.trim().split('\n').at(-1) ?? '');
  const project = path.join(workDir, 'project');
  await mkdir(path.join(project, 'node_modules', '.bin'), { recursive: true });
  const devDependencies: Record<string, string> = {};
  for (const name of devTypes) devDependencies[name] = (await packageJson(path.join(MODULES, name))).version;
  const manifest = { name: 'consumer', private: true, type: 'module', devDependencies };
  await writeFile(path.join(project, 'package.json'), JSON.stringify(manifest));
  const names = [...(await productionPackages()), ...devTypes, ...(await dependenciesOf(devTypes))];
  const copy = (name: string) => cp(path.join(MODULES, name), path.join(project, 'node_modules', name), { recursive: true, dereference: true });
  await Promise.all(names.map(copy));
  await copyCommandLinks(new Set(names), path.join(project, 'node_modules', '.bin'));
  await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project });
  return project;
}

/** The sha256 of a file, to show that an installed file is the very one built here. */
export async function sha256(file: string): Promise<string> {
  return createHash('sha256').update(await readFile(file)).digest('hex');
}

type PackageJson = { version: string; dependencies?: Record<string, string> };

async function packageJson(dir: string): Promise<PackageJson> {
  return JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** The top-level folders of node_modules that the package's dependencies need (nested ones come inside them). */
async function productionPackages(): Promise<string[]> {
  // npm ls exits 1 when the shared tree holds anything extraneous; its list is complete all the same.
  const listing = exec('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT });
  const listed = await listing.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const names = listed.stdout
    .split('\n')
    .map((line) => line.split(`${path.sep}node_modules${path.sep}`))
    .filter((parts) => parts.length === 2)
    .map((parts) => (parts[1] ?? '').split(path.sep).join('/'));
  return [...new Set(names)];
}

async function dependenciesOf(names: readonly string[]): Promise<string[]> {
  const of = async (name: string) => Object.keys((await packageJson(path.join(MODULES, name))).dependencies ?? {});
  return (await Promise.all(names.map(of))).flat();
}

/** The `.bin` links of the copied packages: npm relinks (and unpacks again) a package whose command link is missing. */
async function copyCommandLinks(copied: ReadonlySet<string>, binDir: string): Promise<void> {
  for (const entry of await readdir(path.join(MODULES, '.bin'))) {
    const target = await readlink(path.join(MODULES, '.bin', entry));
    const parts = path.normalize(target).split(path.sep).slice(1);
    const owner = parts[0]?.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (owner !== undefined && copied.has(owner)) await symlink(target, path.join(binDir, entry));
  }
}
