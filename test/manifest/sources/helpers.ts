import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { formatIssue } from '../../../src/manifest/errors.js';
import { fileScope } from '../../../src/manifest/files.js';
import { readSourceBatches } from '../../../src/manifest/read.js';
import { parseSourceEntry } from '../../../src/manifest/sources/entry.js';
import type {
  LocateInEntry,
  SourceContext,
  SourceEntry,
  SourceItem,
  SourceProblem,
  SourceRow,
} from '../../../src/manifest/sources/types.js';

/** The rows of one checked entry, one at a time, in the source's order. */
export async function* readSource(entry: SourceEntry, context: SourceContext): AsyncGenerator<SourceItem> {
  for await (const batch of readSourceBatches(entry, context)) yield* batch;
}

/** The manifest's name in messages: files beside it show as `book/<name>`. */
export const MANIFEST = 'book/manifest.yaml';

const folders: string[] = [];

/** A fresh folder holding `files` (paths relative to it); removed by `removeFolders`. */
export async function folderWith(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mediabatch-sources-'));
  folders.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  return dir;
}

export async function removeFolders(): Promise<void> {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * The first `sources:` entry of a manifest text and a `locate` over its YAML nodes at any depth,
 * as the manifest loader gives one.
 */
export function firstEntry(manifest: string): { raw: unknown; locate: LocateInEntry } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(manifest, { lineCounter });
  const entryNode = doc.getIn(['sources', 0], true) as Node;
  const position = (node: unknown) => {
    const range = (node as Node | undefined)?.range;
    return range === undefined || range === null ? undefined : lineCounter.linePos(range[0]);
  };
  const locate: LocateInEntry = (path, target) => {
    let node: unknown = entryNode;
    let best = position(entryNode) ?? { line: 1, col: 1 };
    for (const [depth, segment] of path.entries()) {
      if (isSeq(node) && typeof segment === 'number') node = node.items[segment];
      else if (isMap(node)) {
        const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === segment);
        if (pair === undefined) return best;
        if (target === 'key' && depth === path.length - 1) return position(pair.key) ?? best;
        node = pair.value;
      } else return best;
      best = position(node) ?? best;
    }
    return best;
  };
  return { raw: doc.toJS().sources[0] as unknown, locate };
}

export interface Read {
  rows: SourceRow[];
  /** Every problem as the CLI prints it. */
  problems: string[];
  raw: SourceProblem[];
}

/** Checks the first entry of `manifest` and reads its rows from `dir` (the manifest's folder). */
export async function readFirst(manifest: string, dir: string, options: { allowOutside?: boolean; input?: Readable } = {}): Promise<Read> {
  const { raw, locate } = firstEntry(manifest);
  const parsed = parseSourceEntry(raw, { manifestFile: MANIFEST, locate });
  if (parsed.entry === undefined) return { rows: [], problems: parsed.problems.map(formatIssue), raw: parsed.problems };
  return readEntry(parsed.entry, dir, locate, options);
}

export async function readEntry(entry: SourceEntry, dir: string, locate: LocateInEntry, options: { allowOutside?: boolean; input?: Readable } = {}): Promise<Read> {
  const scope = await fileScope(dir, options.allowOutside === true);
  const read: Read = { rows: [], problems: [], raw: [] };
  for await (const item of readSource(entry, { manifestFile: MANIFEST, manifestDir: dir, scope, locate, input: options.input })) {
    if (item.row !== undefined) read.rows.push(item.row);
    else {
      read.raw.push(item.problem);
      read.problems.push(formatIssue(item.problem));
    }
  }
  return read;
}

/** Each row's fields, for comparing whole rows at once. */
export function fieldsOf(read: Read): Record<string, unknown>[] {
  return read.rows.map((row) => row.fields);
}
