import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, visit } from 'yaml';
import type { SourcePosition } from './types.js';

/** A parsed manifest plus what is needed to turn an offset into a line and column. */
export interface ManifestSource {
  doc: Document.Parsed;
  lineCounter: LineCounter;
  syntaxErrors: { position: SourcePosition; message: string }[];
}

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

export function parseManifestSource(text: string): ManifestSource {
  const lineCounter = new LineCounter();
  // prettyErrors would put a multi-line code excerpt into the message; one line per issue reads better.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntaxErrors = doc.errors.map((error) => ({
    position: positionAt(lineCounter, error.pos[0]),
    message: error.message,
  }));
  return { doc, lineCounter, syntaxErrors };
}

export function positionAt(lineCounter: LineCounter, offset: number | undefined): SourcePosition {
  if (offset === undefined) return FILE_START;
  const { line, col } = lineCounter.linePos(offset);
  return { line, col };
}

function nodeStart(lineCounter: LineCounter, node: unknown): SourcePosition | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? positionAt(lineCounter, range[0]) : undefined;
}

function findPair(map: unknown, key: PathSegment) {
  if (!isMap(map)) return undefined;
  return map.items.find((pair) => isPair(pair) && isScalar(pair.key) && pair.key.value === key);
}

/**
 * The position of the value (or key) at `path`, or of the deepest node that exists on the way
 * there: a missing field points at the mapping that should hold it.
 */
export function locatePath(source: ManifestSource, path: readonly PathSegment[], target: 'key' | 'value' = 'value'): SourcePosition {
  const { lineCounter } = source;
  let node: unknown = source.doc.contents;
  let best = nodeStart(lineCounter, node) ?? FILE_START;
  for (const [depth, segment] of path.entries()) {
    if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
    } else {
      const pair = findPair(node, segment);
      if (pair === undefined) return best;
      const keyPosition = nodeStart(lineCounter, pair.key) ?? best;
      if (depth === path.length - 1 && target === 'key') return keyPosition;
      node = pair.value;
      // `voice:` with nothing after it has no value node: point at the key instead.
      best = nodeStart(lineCounter, node) ?? keyPosition;
      continue;
    }
    best = nodeStart(lineCounter, node) ?? best;
  }
  return best;
}

/** The layout of one mapping (a job or a defaults block), in one walk over its pairs. */
export function locateMap(source: ManifestSource, node: unknown, fallback: SourcePosition): MapLocation {
  const fields = new Map<string, FieldLocation>();
  const start = nodeStart(source.lineCounter, node) ?? fallback;
  if (!isMap(node)) return { start, fields };
  for (const pair of node.items) {
    if (!isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
    const key = nodeStart(source.lineCounter, pair.key) ?? start;
    fields.set(pair.key.value, { key, value: nodeStart(source.lineCounter, pair.value) ?? key });
  }
  return { start, fields };
}

/** The YAML nodes of `jobs:` items, in order; empty when `jobs` is not a sequence. */
export function jobNodes(source: ManifestSource): unknown[] {
  const jobs = findPair(source.doc.contents, 'jobs')?.value;
  return isSeq(jobs) ? jobs.items : [];
}

export function defaultsNode(source: ManifestSource, type: string): unknown {
  const defaults = findPair(source.doc.contents, 'defaults')?.value;
  return findPair(defaults, type)?.value;
}

/** Where the first alias (`*name`) of the document is, if it has one. */
export function firstAliasPosition(source: ManifestSource): SourcePosition | undefined {
  let found: SourcePosition | undefined;
  visit(source.doc, {
    Alias(_key, node) {
      if (!isAlias(node)) return undefined;
      found = nodeStart(source.lineCounter, node);
      return visit.BREAK;
    },
  });
  return found;
}
