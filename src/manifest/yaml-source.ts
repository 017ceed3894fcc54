import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, visit, type YAMLParseError } from 'yaml';
import { MediabatchError, UsageError } from '../errors.js';
import type { SourcePosition } from '../jobs/index.js';
import { ManifestError, type ManifestIssue } from './errors.js';
import { MAX_TEXT_BYTES, sizeText } from './files.js';
import { PlainValueProblem, plainValue } from './yaml-plain.js';

/**
 * What is kept of one YAML node once its Document is gone: where it starts and, near the top, its
 * pairs or items. A fraction of the Document's size, and the Document dies inside the parse, so
 * the checks after it never hold the tree whatever they keep across their awaits.
 */
interface NodeIndex {
  kind: 'map' | 'seq' | 'other';
  /** Undefined for a value that is not written (`voice:` with nothing after it). */
  start: SourcePosition | undefined;
  pairs?: PairIndex[];
  items?: (NodeIndex | undefined)[];
}

// Only pairs with a scalar key: others never match a path. Nor merge keys: a merged field has no
// position of its own, so it is placed at its mapping.
interface PairIndex {
  key: unknown;
  keyStart: SourcePosition | undefined;
  value: NodeIndex | undefined;
}

export interface ManifestSource {
  root: unknown;
  index: NodeIndex | undefined;
}

export interface MapLocation {
  start: SourcePosition;
  fields: Map<string, { key: SourcePosition; value: SourcePosition }>;
}

export type PathSegment = string | number;

const FILE_START: SourcePosition = { line: 1, col: 1 };
// The schema is three levels deep (jobs → item → field, defaults → type → field): zod never reports
// a deeper path, and a shallow walk cannot overflow the stack on a value nested 5,000 levels deep.
const INDEX_DEPTH = 3;
// A source entry's columns and matrix values sit two levels deeper (sources → entry → matrix → field → value).
const SOURCES_DEPTH = 5;

function nodeStart(lineCounter: LineCounter, node: unknown): SourcePosition | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? lineCounter.linePos(range[0]) : undefined;
}

function indexNode(lineCounter: LineCounter, node: unknown, depth: number, maxDepth = INDEX_DEPTH): NodeIndex | undefined {
  if (node === null || node === undefined) return undefined;
  const start = nodeStart(lineCounter, node);
  if (isMap(node)) {
    if (depth >= maxDepth) return { kind: 'map', start };
    const pairs: PairIndex[] = [];
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key) || typeof pair.key.value === 'symbol') continue;
      const limit = depth === 0 && pair.key.value === 'sources' ? SOURCES_DEPTH : maxDepth;
      pairs.push({ key: pair.key.value, keyStart: nodeStart(lineCounter, pair.key), value: indexNode(lineCounter, pair.value, depth + 1, limit) });
    }
    return { kind: 'map', start, pairs };
  }
  if (isSeq(node)) {
    if (depth >= maxDepth) return { kind: 'seq', start };
    return { kind: 'seq', start, items: node.items.map((item) => indexNode(lineCounter, item, depth + 1, maxDepth)) };
  }
  return { kind: 'other', start };
}

function firstAliasPosition(lineCounter: LineCounter, doc: Document.Parsed): SourcePosition | undefined {
  let found: SourcePosition | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (!isAlias(node)) return undefined;
      found = nodeStart(lineCounter, node);
      return visit.BREAK;
    },
  });
  return found;
}

/**
 * Rewrites every string of a plain value flat. yaml builds a quoted scalar a character at a time,
 * which V8 keeps as a tree of concatenations many times the string's size; converting it to a
 * number flattens it in place (as the flatstr package does). Iterative, and each object once: a
 * value may be thousands of levels deep or, through aliases, shared.
 */
function flattenStrings(value: unknown): void {
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== 'object' || seen.has(current) || ArrayBuffer.isView(current)) continue;
    seen.add(current);
    for (const item of Object.values(current)) {
      if (typeof item === 'string') Number(item);
      else pending.push(item);
    }
  }
}

// yaml's own advice for a second document is to call parseAllDocuments(), which is ours to know.
function syntaxIssue(file: string, lineCounter: LineCounter, error: YAMLParseError): ManifestIssue {
  const { line, col } = lineCounter.linePos(error.pos[0]);
  const message =
    error.code === 'MULTIPLE_DOCS' ? `expected one document (a manifest is one), got a second one starting on line ${line}; keep one manifest per file` : error.message;
  return { file, line, col, message: `YAML syntax: ${message}` };
}

function plainRoot(file: string, lineCounter: LineCounter, doc: Document.Parsed): unknown {
  try {
    return plainValue(doc);
  } catch (error) {
    if (!(error instanceof PlainValueProblem)) throw error;
    // An alias bomb has no node of its own: it is reported where the first alias is.
    const position = (error.node === undefined ? firstAliasPosition(lineCounter, doc) : nodeStart(lineCounter, error.node)) ?? FILE_START;
    throw new ManifestError([{ file, ...position, message: error.message }], error);
  }
}

const TOO_DEEP = 'YAML syntax: nested too deeply to read (more levels of lists or mappings than the parser can follow); flatten the structure';

/**
 * The manifest text as one YAML document: its plain value and the positions of its nodes. Throws
 * ManifestError for every syntax error (located), a second document, nesting too deep to read,
 * or a problem with aliases or merge keys. `file` is the path messages show.
 */
export function parseManifestSource(text: string, file: string): ManifestSource {
  const lineCounter = new LineCounter();
  try {
    // prettyErrors would put a multi-line code excerpt into the message; one line per issue reads better.
    // merge: `<<: *common` merges a mapping, as most YAML users expect, instead of being a key named "<<".
    const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
    // After a syntax error the tree is a guess: checking it would report phantom problems.
    if (doc.errors.length > 0) throw new ManifestError(doc.errors.map((e) => syntaxIssue(file, lineCounter, e)));
    const root = plainRoot(file, lineCounter, doc);
    flattenStrings(root);
    return { root, index: indexNode(lineCounter, doc.contents, 0) };
  } catch (error) {
    // The parser and the plain value recurse: a structure thousands of levels deep overflows the
    // stack, which is bad input, not a bug.
    if (!(error instanceof RangeError)) throw error;
    throw new ManifestError([{ file, ...FILE_START, message: TOO_DEEP }], error);
  }
}

function findPair(node: NodeIndex | undefined, key: PathSegment): PairIndex | undefined {
  return node?.kind === 'map' ? node.pairs?.find((pair) => pair.key === key) : undefined;
}

/**
 * The position of the value (or key) at `path`, or of the deepest node that exists on the way
 * there: a missing field points at the mapping that should hold it.
 */
export function locatePath(source: ManifestSource, path: readonly PathSegment[], target: 'key' | 'value' = 'value'): SourcePosition {
  let node = source.index;
  let best = node?.start ?? FILE_START;
  for (const [depth, segment] of path.entries()) {
    if (node?.kind === 'seq' && typeof segment === 'number') {
      node = node.items?.[segment];
    } else {
      const pair = findPair(node, segment);
      if (pair === undefined) return best;
      const keyPosition = pair.keyStart ?? best;
      if (depth === path.length - 1 && target === 'key') return keyPosition;
      node = pair.value;
      // `voice:` with nothing after it has no value node: point at the key instead.
      best = node?.start ?? keyPosition;
      continue;
    }
    best = node?.start ?? best;
  }
  return best;
}

/** The layout of the mapping at `path` (a job or a defaults block). */
export function locateMap(source: ManifestSource, path: readonly PathSegment[]): MapLocation {
  let node = source.index;
  for (const step of path) node = node?.kind === 'seq' ? node.items?.[step as number] : findPair(node, step)?.value;
  const fields = new Map<string, { key: SourcePosition; value: SourcePosition }>();
  const start = node?.start ?? FILE_START;
  if (node?.kind !== 'map') return { start, fields };
  for (const pair of node.pairs ?? []) {
    if (typeof pair.key !== 'string') continue;
    const key = pair.keyStart ?? start;
    fields.set(pair.key, { key, value: pair.value?.start ?? key });
  }
  return { start, fields };
}

// Parsing holds the whole YAML tree, many times the text's size: unbounded, a file of millions of
// tiny values fills the heap while yaml builds it. A manifest this large would be split anyway.
const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

// yaml holds a scalar many times over while it unfolds it, so a text far past what a job may send
// (1 MB, written with escapes up to twice as long) is refused before parsing: by its line, or for a
// block scalar (`text: |`) by the lines it spans.
const MAX_LINE_BYTES = 2 * MAX_TEXT_BYTES;

// A line that ends by opening a block scalar: `key: |`, `- >-`, `text: |2 # comment`.
const BLOCK_HEADER = /(?:^|[:-])[ \t]+[|>][-+1-9]{0,2}[ \t]*(?:#.*)?$/;

/** `length`: in bytes; for a `block` (a scalar spanning lines from `line` on), as far as it was read. */
interface LongText {
  line: number;
  length: number;
  block: boolean;
}

/** The first line, or block scalar, longer than MAX_LINE_BYTES. */
function longText(bytes: Buffer): LongText | undefined {
  let block: { line: number; indent: number; length: number } | undefined;
  let line = 1;
  for (let start = 0; start < bytes.length; line += 1) {
    const end = bytes.indexOf(10, start);
    const stop = end === -1 ? bytes.length : end;
    const length = stop - start;
    if (length > MAX_LINE_BYTES) return { line, length, block: false };
    const indent = indentOf(bytes, start, stop);
    if (block !== undefined && (indent === length || indent > block.indent)) {
      block.length += length + 1;
      if (block.length > MAX_LINE_BYTES) return { line: block.line, length: block.length, block: true };
    } else {
      block = length < 4096 && BLOCK_HEADER.test(bytes.toString('utf8', start, stop)) ? { line, indent, length: 0 } : undefined;
    }
    start = stop + 1;
  }
  return undefined;
}

function indentOf(bytes: Buffer, start: number, stop: number): number {
  let at = start;
  while (at < stop && bytes[at] === 32) at += 1;
  return at - start;
}

function unreadable(path: string, code: string | undefined, cause: unknown): UsageError {
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : String(code ?? cause);
  return new UsageError(`cannot read the manifest ${path}: ${why}`, cause);
}

const CAP_TEXT = `${MAX_MANIFEST_BYTES / (1024 * 1024)} MB`;

function tooLarge(path: string, got: string): ManifestError {
  const message = `expected a manifest of at most ${CAP_TEXT}, got ${got}`;
  return new ManifestError([{ file: path, line: 1, col: 1, message, hint: 'split it into several manifests' }]);
}

/** The manifest's text. Throws UsageError when it cannot be read, ManifestError when too large or not UTF-8. */
export async function readManifestText(path: string, absolute: string): Promise<string> {
  let bytes: Buffer;
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) throw unreadable(path, 'EISDIR', undefined);
    if (info.size > MAX_MANIFEST_BYTES) throw tooLarge(path, sizeText(info.size, MAX_MANIFEST_BYTES));
    // At most one byte past the cap, whatever the file is: a pipe or a device has no size to check first.
    bytes = await buffer(createReadStream(absolute, { end: MAX_MANIFEST_BYTES }));
  } catch (error) {
    if (error instanceof MediabatchError) throw error;
    throw unreadable(path, (error as NodeJS.ErrnoException).code, error);
  }
  if (bytes.length > MAX_MANIFEST_BYTES) throw tooLarge(path, `more than ${CAP_TEXT}`);
  const long = longText(bytes);
  if (long !== undefined) {
    const cap = `${MAX_LINE_BYTES / (1024 * 1024)} MB`;
    // A block is measured only until it passes the cap: its whole size is not known.
    const message = long.block ? `expected texts of at most ${cap}, got a block text longer than that` : `expected lines of at most ${cap}, got one of ${sizeText(long.length, MAX_LINE_BYTES)}`;
    const hint = "a job's text is at most 1 MB; split a longer one into several jobs";
    throw new ManifestError([{ file: path, line: long.line, col: 1, message, hint }]);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    const issue = { file: path, line: 1, col: 1, message: 'expected a UTF-8 text file, got bytes that are not UTF-8', hint: 'save the file as UTF-8' };
    throw new ManifestError([issue], error);
  }
}
