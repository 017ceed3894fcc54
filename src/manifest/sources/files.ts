import { type Dirent, readdir } from 'node:fs';
import { posix } from 'node:path';
import { glob } from 'tinyglobby';
import { expectedGot, formatGot } from '../errors.js';
import { fromOf } from '../fields.js';
import type { FilesEntry, SourceContext, SourceItem } from './types.js';
import { assembleRow, BATCH_ROWS, manifestAt, parseIdTemplate, problemAt, stemOf, templateProblem } from './rows.js';
import type { Filling, IdTemplate, Placeholder } from './rows.js';

/** Without an `id:` on the entry, each file's job is named after the file. */
const DEFAULT_TEMPLATE = parseIdTemplate('{stem}') as { ok: true; value: IdTemplate };

/** What a files source's id template may use besides the entry's fields. */
const FILE_NAMES = ['n', 'stem', 'name', 'ext', 'dir'] as const;

function fileFilling(path: string, ordinal: number): Record<(typeof FILE_NAMES)[number], unknown> {
  const name = posix.basename(path);
  const dot = name.lastIndexOf('.');
  const dir = posix.dirname(path);
  return {
    n: ordinal + 1,
    stem: stemOf(path),
    name,
    ext: dot > 0 ? name.slice(dot + 1) : '',
    // The folder inside the manifest's folder, `/` becoming `-` once made id-safe; none for a file at the top.
    dir: dir === '.' ? '' : dir,
  };
}

/** A path a glob gave that is still inside the folder it ran in (belt and braces: the pattern was checked). */
function inside(path: string): boolean {
  return !posix.isAbsolute(path) && path !== '..' && !path.startsWith('../');
}

/** A symbolic link as the walk sees it: a file, listed and never entered. */
function linkAsFile(entry: Dirent): Dirent {
  return entry.isSymbolicLink() ? Object.assign(Object.create(entry) as Dirent, { isFile: () => true, isSymbolicLink: () => false }) : entry;
}

type ReaddirDone = (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void;

// tinyglobby either drops links or follows them, into linked folders too (out of the manifest's
// folder, or round in a loop). Shown to it as files, links are listed without being followed.
const LINKS_AS_FILES = {
  readdir: ((path: string, options: { withFileTypes: true }, done: ReaddirDone) =>
    readdir(path, options, (error, entries) => done(error, entries?.map(linkAsFile)))) as unknown as typeof readdir,
};

/**
 * The files a pattern matches, relative to the manifest's folder, sorted by path (code units, so
 * `ch-10` sorts before `ch-2`: pad numbers in names). Dot files only when the pattern names them;
 * symbolic links to folders are not followed, so the walk stays inside the folder; a link is
 * matched by its own name and judged later by the file scope rule like any file a manifest names
 * (a link to a folder is then refused as not a regular file).
 */
export async function matchingFiles(entry: FilesEntry, context: Pick<SourceContext, 'manifestDir'>): Promise<string[]> {
  const options = { cwd: context.manifestDir, onlyFiles: true, dot: false, followSymbolicLinks: false, expandDirectories: false, fs: LINKS_AS_FILES };
  const found = await glob(entry.glob, options);
  return found.filter(inside).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * One row per file matching `files:` (a glob relative to the manifest's folder), the file's path
 * in `field`. Located at the entry's `files:` value in the manifest. A pattern that matches
 * nothing is a problem: it is almost always a mistake. Id template placeholders: `{stem}` (file
 * name without extension, the default template), `{name}`, `{ext}`, `{dir}`, `{n}` and the
 * entry's fields.
 */
export async function* readFiles(given: FilesEntry, context: SourceContext): AsyncGenerator<SourceItem[]> {
  const entry: FilesEntry = { ...given, idTemplate: given.idTemplate ?? DEFAULT_TEMPLATE.value };
  const at = manifestAt(context, ['files']);
  const template = templateProblem(entry, context, [...FILE_NAMES, entry.field, ...Object.keys(entry.fields)]);
  if (template !== undefined) return yield [template];
  const paths = await matchingFiles(entry, context);
  if (paths.length === 0) {
    const hint = "the pattern is relative to the manifest's folder, and * matches no name that starts with a dot";
    return yield [problemAt(at, { field: 'files', ...expectedGot('at least one matching file', `none for ${formatGot(entry.glob)}`), hint })];
  }
  for (let start = 0; start < paths.length; start += BATCH_ROWS) {
    yield paths.slice(start, start + BATCH_ROWS).map((path, i) => {
      const ordinal = start + i;
      const names = fileFilling(path, ordinal);
      // A field the entry takes from other jobs (`{ from: "rmbg-{stem}" }`) keeps it: the file only names the row.
      const fromJobs = fromOf(entry.fields[entry.field]) !== undefined;
      const fields: Record<string, unknown> = fromJobs ? { ...entry.fields } : { ...entry.fields, [entry.field]: path };
      const fill = (p: Placeholder): Filling | undefined =>
        Object.hasOwn(names, p.name) ? { value: names[p.name as keyof typeof names] } : undefined;
      return assembleRow({ ordinal, entry, context, fields, at, fill });
    });
  }
}
