import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, visit, type YAMLParseError } from 'yaml';
import type { SourcePosition } from './types.js';
import { PlainValueProblem, plainValue } from './yaml-plain.js';

/**
 * What is kept of one YAML node once its Document is gone: where it starts and, for mappings and
 * sequences near the top, their pairs or items. A 10,000-job Document costs about 45 MB; this
 * costs a few bytes per field, so the Document can be dropped as soon as it has been read.
 */
export interface NodeIndex {
  kind: 'map' | 'seq' | 'other';
  /** Undefined for a value that is not written (`voice:` with nothing after it). */
  start: SourcePosition | undefined;
  pairs?: PairIndex[];
  items?: (NodeIndex | undefined)[];
}

/**
 * A pair with a scalar key; pairs with other keys can never match a path, so they are not kept
 * (nor merge keys: a merged field has no position of its own, so it is placed at its mapping).
 */
export interface PairIndex {
  key: unknown;
  keyStart: SourcePosition | undefined;
  value: NodeIndex | undefined;
}

/** A parsed manifest: its plain value and the positions messages need. */
export interface ManifestSource {
  root: unknown;
  index: NodeIndex | undefined;
}

export interface SyntaxProblem {
  position: SourcePosition;
  message: string;
}

/** How reading one piece of YAML text ended. A RangeError (nesting too deep) is thrown, not returned. */
export type PieceOutcome =
  | { kind: 'syntax'; errors: SyntaxProblem[] }
  | { kind: 'expansion'; position: SourcePosition | undefined; message: string }
  | { kind: 'parsed'; value: unknown; index: NodeIndex | undefined; usesAnchors: boolean };

export interface FieldLocation {
  key: SourcePosition;
  value: SourcePosition;
}

/** Where a mapping starts and where each of its keys and values sits. */
export interface MapLocation {
  start: SourcePosition;
  fields: Map<string, FieldLocation>;
}

export type PathSegment = string | number;

const FILE_START: SourcePosition = { line: 1, col: 1 };
// The schema is three levels deep (jobs → item → field, defaults → type → field): zod never reports
// a deeper path, and a shallow walk cannot overflow the stack on a value nested 5,000 levels deep.
const INDEX_DEPTH = 3;

/** Positions in a piece that starts on line `firstLine` of the file (pieces always start a line). */
interface PieceLines {
  lineCounter: LineCounter;
  firstLine: number;
}

function positionAt({ lineCounter, firstLine }: PieceLines, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(offset);
  return { line: line + firstLine - 1, col };
}

function nodeStart(lines: PieceLines, node: unknown): SourcePosition | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? positionAt(lines, range[0]) : undefined;
}

function indexNode(lines: PieceLines, node: unknown, depth: number): NodeIndex | undefined {
  if (node === null || node === undefined) return undefined;
  const start = nodeStart(lines, node);
  if (isMap(node)) {
    if (depth >= INDEX_DEPTH) return { kind: 'map', start };
    const pairs: PairIndex[] = [];
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key) || typeof pair.key.value === 'symbol') continue;
      pairs.push({ key: pair.key.value, keyStart: nodeStart(lines, pair.key), value: indexNode(lines, pair.value, depth + 1) });
    }
    return { kind: 'map', start, pairs };
  }
  if (isSeq(node)) {
    if (depth >= INDEX_DEPTH) return { kind: 'seq', start };
    return { kind: 'seq', start, items: node.items.map((item) => indexNode(lines, item, depth + 1)) };
  }
  return { kind: 'other', start };
}

function firstAliasPosition(lines: PieceLines, doc: Document.Parsed): SourcePosition | undefined {
  let found: SourcePosition | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (!isAlias(node)) return undefined;
      found = nodeStart(lines, node);
      return visit.BREAK;
    },
  });
  return found;
}

function hasAnchorOrAlias(doc: Document.Parsed): boolean {
  let found = false;
  visit(doc, (_key, node) => {
    if (isAlias(node) || ((isMap(node) || isSeq(node) || isScalar(node)) && node.anchor !== undefined)) {
      found = true;
      return visit.BREAK;
    }
    return undefined;
  });
  return found;
}

/**
 * Rewrites every string of a plain value flat. yaml builds a quoted scalar a character at a time;
 * V8 keeps such a string as a tree of concatenations, ~30 bytes per character: a 10,000-job
 * manifest's values took ~29 MB instead of ~4. Converting a string to a number makes V8 flatten it
 * in place (as the flatstr package does); the number itself is not wanted. Iterative, and each
 * object once: a value may be thousands of levels deep or, through aliases, shared.
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
function syntaxProblem(lines: PieceLines, error: YAMLParseError): SyntaxProblem {
  const position = positionAt(lines, error.pos[0]);
  if (error.code !== 'MULTIPLE_DOCS') return { position, message: error.message };
  const message = `expected one document (a manifest is one), got a second one starting on line ${position.line}; keep one manifest per file`;
  return { position, message };
}

/**
 * Reads one piece of YAML that starts on line `firstLine` of the file and holds a node
 * `rootDepth` levels below the document's top: its syntax errors, a problem with its aliases (an
 * alias bomb is reported where the first alias is), or its plain value and position index.
 */
export function parsePiece(text: string, firstLine = 1, rootDepth = 0): PieceOutcome {
  const lines = { lineCounter: new LineCounter(), firstLine };
  // prettyErrors would put a multi-line code excerpt into the message; one line per issue reads better.
  // merge: `<<: *common` merges a mapping, as most YAML users expect, instead of being a key named "<<".
  const doc = parseDocument(text, { lineCounter: lines.lineCounter, prettyErrors: false, merge: true });
  if (doc.errors.length > 0) {
    return { kind: 'syntax', errors: doc.errors.map((error) => syntaxProblem(lines, error)) };
  }
  let value: unknown;
  try {
    value = plainValue(doc);
  } catch (error) {
    if (!(error instanceof PlainValueProblem)) throw error;
    const position = error.node === undefined ? firstAliasPosition(lines, doc) : nodeStart(lines, error.node);
    return { kind: 'expansion', position, message: error.message };
  }
  flattenStrings(value);
  // Only a text with `&` or `*` somewhere can hold an anchor or alias: skip the walk for the rest.
  const usesAnchors = /[&*]/.test(text) && hasAnchorOrAlias(doc);
  return { kind: 'parsed', value, index: indexNode(lines, doc.contents, rootDepth), usesAnchors };
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

/** The layout of one mapping (a job or a defaults block). */
export function locateMap(node: NodeIndex | undefined, fallback: SourcePosition): MapLocation {
  const fields = new Map<string, FieldLocation>();
  const start = node?.start ?? fallback;
  if (node?.kind !== 'map') return { start, fields };
  for (const pair of node.pairs ?? []) {
    if (typeof pair.key !== 'string') continue;
    const key = pair.keyStart ?? start;
    fields.set(pair.key, { key, value: pair.value?.start ?? key });
  }
  return { start, fields };
}

/** The nodes of `jobs:` items, in order; empty when `jobs` is not a sequence. */
export function jobNodes(source: ManifestSource): (NodeIndex | undefined)[] {
  const jobs = findPair(source.index, 'jobs')?.value;
  return jobs?.kind === 'seq' ? (jobs.items ?? []) : [];
}

export function defaultsNode(source: ManifestSource, type: string): NodeIndex | undefined {
  return findPair(findPair(source.index, 'defaults')?.value, type)?.value;
}
