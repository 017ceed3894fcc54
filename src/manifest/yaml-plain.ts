import { type Alias, type Document, isAlias, isMap, isPair, isScalar, isSeq, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { printable } from './errors.js';

// yaml's own toJS is not used: it resolves each alias by scanning every anchor and alias before it
// (quadratic), converts a merge source again at every use, and its only guard against an alias bomb
// counts aliases, refusing the 101st use of an ordinary `voice: *v`. Here an alias is a map lookup
// sharing its anchor's value, and what is bounded is the size once every alias is written out,
// counted once per object, so linear in the document.

// About what a manifest at the size cap holds written out in full, so anchors never let a manifest
// grow past what writing it out could; an alias bomb ("billion laughs") expands to hundreds of millions.
const MAX_EXPANDED_VALUES = 5_000_000;

/** Why a document has no plain value, and the node to point at. */
export class PlainValueProblem extends Error {
  constructor(
    readonly node: Node | undefined,
    message: string,
  ) {
    super(message);
  }
}

interface Walk {
  /** Each anchor's latest node so far: an alias names the last one before it. */
  anchors: Map<string, Node>;
  /** Anchored nodes being converted: an alias to one of them would repeat forever. */
  open: Set<Node>;
  values: Map<Node, unknown>;
  /** Expanded size of each list and mapping made so far. */
  sizes: Map<object, number>;
  /** A merge copies, so each use costs its source's size. */
  mergedEntries: number;
}

const TOO_LARGE = `YAML aliases: expected at most ${MAX_EXPANDED_VALUES} values once anchors are expanded, got more (an alias bomb?); write the values out instead`;

function sizeOf(walk: Walk, value: unknown): number {
  return value !== null && typeof value === 'object' ? (walk.sizes.get(value) ?? 1) : 1;
}

function sized<T extends object>(walk: Walk, value: T): T {
  let size = 1;
  for (const item of Object.values(value)) size += sizeOf(walk, item);
  // Refused even where the container is not kept (merge sources, a key): stopping at the first
  // container past the bound stops an alias bomb's work too.
  if (size > MAX_EXPANDED_VALUES) throw new PlainValueProblem(undefined, TOO_LARGE);
  walk.sizes.set(value, size);
  return value;
}

const ANCHOR_MAX_CHARS = 40;

function aliased(walk: Walk, alias: Alias): unknown {
  const target = walk.anchors.get(alias.source);
  const name = printable(alias.source, ANCHOR_MAX_CHARS);
  if (target === undefined) {
    throw new PlainValueProblem(alias, `YAML aliases: expected an anchor &${name} before the alias *${name}, found none; set the anchor first`);
  }
  if (walk.open.has(target)) {
    throw new PlainValueProblem(alias, `YAML aliases: expected *${name} outside the value &${name} names, got it inside (it would repeat forever); write the value out instead`);
  }
  return walk.values.get(target);
}

// As yaml names keys of a JavaScript object: null is '', a scalar its text. A list or mapping as a
// key is never a field name; a short stand-in keeps a message about it short.
function keyText(node: unknown, key: unknown): string {
  if (key === null || key === undefined) return '';
  if (typeof key !== 'object') return String(key);
  return isSeq(node) ? '[…]' : '{…}';
}

// Own properties even for names like `__proto__` or `constructor`, as yaml's toJS makes them.
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key in target) Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

function isMergeKey(key: unknown): boolean {
  // With `merge: true`, yaml reads a plain `<<` key as this symbol; a quoted "<<" stays text.
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null || value === undefined) return 'nothing';
  return typeof value === 'string' ? 'text' : typeof value;
}

// `<<: *common` (or a list of such): earlier sources win over later ones, and the mapping's own keys,
// written before or after, over all (YAML's merge key, as yaml applies it).
function merge(walk: Walk, target: Record<string, unknown>, pair: Pair): void {
  const value = convert(walk, pair.value);
  const sources = Array.isArray(value) ? value : [value];
  for (const source of sources) {
    if (!isMapping(source)) {
      const message = `YAML merge: expected a mapping (or an alias of one, or a list of them) after <<, got ${kindOf(source)}; merge only mappings`;
      throw new PlainValueProblem((pair.value ?? pair.key) as Node, message);
    }
    const keys = Object.keys(source);
    walk.mergedEntries += keys.length;
    if (walk.mergedEntries > MAX_EXPANDED_VALUES) throw new PlainValueProblem(undefined, TOO_LARGE);
    for (const key of keys) if (!Object.prototype.hasOwnProperty.call(target, key)) setOwn(target, key, source[key]);
  }
}

function addPair(walk: Walk, target: Record<string, unknown>, pair: Pair): void {
  if (isMergeKey(pair.key)) return merge(walk, target, pair);
  const key = keyText(pair.key, convert(walk, pair.key));
  setOwn(target, key, convert(walk, pair.value));
}

function mapValue(walk: Walk, node: YAMLMap): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const pair of node.items) addPair(walk, target, pair);
  return sized(walk, target);
}

function seqValue(walk: Walk, node: YAMLSeq): unknown[] {
  const items = node.items.map((item) => {
    // `[a: 1]` is a list holding the mapping {a: 1}.
    if (!isPair(item)) return convert(walk, item);
    const single: Record<string, unknown> = {};
    addPair(walk, single, item);
    return sized(walk, single);
  });
  return sized(walk, items);
}

function nodeValue(walk: Walk, node: Node): unknown {
  if (isScalar(node)) return typeof node.value === 'bigint' ? Number(node.value) : node.value;
  if (isMap(node)) return mapValue(walk, node);
  if (isSeq(node)) return seqValue(walk, node);
  return null;
}

function convert(walk: Walk, node: unknown): unknown {
  if (node === null || node === undefined) return node;
  if (isAlias(node)) return aliased(walk, node);
  const anchored = node as Node;
  const anchor = (anchored as { anchor?: string }).anchor;
  if (anchor === undefined) return nodeValue(walk, anchored);
  // Set on entering, as yaml does: an alias inside this node names this node (and is refused).
  walk.anchors.set(anchor, anchored);
  walk.open.add(anchored);
  const value = nodeValue(walk, anchored);
  walk.open.delete(anchored);
  walk.values.set(anchored, value);
  return value;
}

/**
 * The document's plain value, as yaml's toJS would give it, aliases sharing their anchor's value.
 * Throws PlainValueProblem for a bad alias or merge, or a value too large once expanded. The walk
 * recurses: a RangeError on a value nested thousands of levels deep is the caller's to report.
 */
export function plainValue(doc: Document.Parsed): unknown {
  const walk: Walk = { anchors: new Map(), open: new Set(), values: new Map(), sizes: new Map(), mergedEntries: 0 };
  return convert(walk, doc.contents);
}
