import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

interface PackageJson {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function readPackage(dir: string): PackageJson {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** Where Node finds `name` from `dir`: its node_modules, then each parent's, up to the project. */
function installed(name: string, dir: string): string | undefined {
  for (let at = dir; at.startsWith(ROOT); at = path.dirname(at)) {
    const candidate = path.join(at, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (at === ROOT) break;
  }
  return undefined;
}

/** Every package `npm install --omit=dev` brings, each once, with the folder it lives in. */
function productionPackages(): { dir: string; pkg: PackageJson }[] {
  const seen = new Map<string, { dir: string; pkg: PackageJson }>();
  const visit = (dir: string): void => {
    const pkg = readPackage(dir);
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const found = installed(name, dir);
      if (found === undefined || seen.has(found)) continue;
      seen.set(found, { dir: found, pkg: readPackage(found) });
      visit(found);
    }
  };
  visit(ROOT);
  return [...seen.values()];
}

describe('package.json engines', () => {
  const ours = readPackage(ROOT).engines?.node ?? '';

  it('promises no Node version a production dependency does not support', () => {
    const packages = productionPackages();
    expect(packages.length).toBeGreaterThan(20);
    const wider = packages
      .filter(({ pkg }) => pkg.engines?.node !== undefined && !semver.subset(ours, pkg.engines.node, { includePrerelease: false }))
      .map(({ pkg }) => `${pkg.name}@${pkg.version} needs node ${pkg.engines?.node}`);
    expect(wider).toEqual([]);
  });

  it('is as wide as the dependencies allow: the ones that set the floor are still satisfied by it', () => {
    // yargs 18 sets the floor (^20.19.0 || ^22.12.0 || >=23) and better-sqlite3 12 the ceiling (26.x).
    for (const version of ['20.19.0', '22.12.0', '23.0.0', '24.0.0', '26.9.9']) expect(semver.satisfies(version, ours), version).toBe(true);
    for (const version of ['20.18.3', '21.7.3', '22.11.0', '27.0.0']) expect(semver.satisfies(version, ours), version).toBe(false);
  });
});
