import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import type { FileCheck } from './files.js';

/**
 * Where the files a manifest names may be. A manifest may come from someone else: it must not be
 * able to send a local file (`../../.ssh/id_rsa`, `/etc/passwd`, or a link to either) to the
 * service, so by default every file must be inside the manifest's folder once symlinks are resolved.
 */
export interface FileScope {
  /** The manifest's folder, as written and with its symlinks resolved. */
  folder: string;
  realFolder: string;
  /** `--allow-outside-files`: the user vouches for the manifest. */
  allowOutside: boolean;
}

export async function fileScope(folder: string, allowOutside: boolean): Promise<FileScope> {
  // The manifest was just read from this folder: it exists; if it vanished since, nothing in it will be read anyway.
  const realFolder = await realpath(folder).catch(() => folder);
  return { folder, realFolder, allowOutside };
}

function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The path to read for `path` (absolute): its real path, or why it may not be read. A path that
 * does not resolve (no such file) is judged as written and left to the checks that report it.
 */
export async function confine(scope: FileScope, path: string): Promise<FileCheck<string>> {
  const real = await realpath(path).catch(() => undefined);
  if (scope.allowOutside) return { ok: true, value: real ?? path };
  if (real === undefined ? isInside(scope.folder, path) : isInside(scope.realFolder, real)) return { ok: true, value: real ?? path };
  return {
    ok: false,
    expected: "a file inside the manifest's folder",
    detail: `resolves to ${real ?? path}`,
    hint: 'copy the file into that folder, or pass --allow-outside-files if you trust this manifest',
  };
}
