import type { NodeIndex, PieceOutcome } from './yaml-source.js';
import { parsePiece } from './yaml-source.js';

/**
 * Reading a large manifest in pieces. yaml's Document for a 10,000-job file takes ~45 MB and its
 * CST ~38 MB more while it is composed; parsed 500 jobs at a time, only one piece's worth is alive.
 *
 * It is only done for the plain shape every generated manifest has: a top-level `jobs:` followed by
 * a block sequence whose items start with `- ` at one indentation. Anything else (flow `jobs: [...]`,
 * document markers, directives, tabs or CR in the text, anchors and aliases) is read whole, as is any
 * file with a syntax error, so that every message and position is exactly the whole-document one.
 */

// Jobs per piece: a piece's Document must die young (in V8's new space) or it piles up as garbage
// in the old space until the next full GC; 500 measured ~20 MB more peak RSS than 100 on 10,000 jobs.
export const JOBS_PER_PIECE = 100;

const JOBS_LINE = /^jobs:[ ]*(?:#.*)?$/;
// Shapes the split does not reason about; each is legal YAML, so the whole-document parse takes them.
const UNUSUAL = /\r|^\ufeff|^[ ]*\t|^(?:---|\.\.\.)(?:\s|$)|^%/m;
const ANY_JOBS_KEY = /^["']?jobs["']?[ ]*:/gm;

interface Split {
  /** Offset of the first item's `-`-line and of the line after the last item's last line. */
  regionStart: number;
  regionEnd: number;
  /** Where each piece starts: its offset and 1-based line. */
  pieceStarts: { offset: number; line: number }[];
  firstItemLine: number;
  jobsLine: number;
}

function isBlankOrComment(line: string): boolean {
  return /^[ ]*(?:#.*)?$/.test(line);
}

function indentOf(line: string): number {
  return /^ */.exec(line)?.[0].length ?? 0;
}

/** Where the job items are, or undefined for a text whose layout is not the plain one. */
export function splitJobs(text: string, jobsPerPiece: number): Split | undefined {
  if (UNUSUAL.test(text) || (text.match(ANY_JOBS_KEY)?.length ?? 0) !== 1) return undefined;
  let offset = 0;
  let line = 1;
  let jobsLine = 0;
  let itemIndent = -1;
  let items = 0;
  const split: Split = { regionStart: -1, regionEnd: text.length, pieceStarts: [], firstItemLine: 0, jobsLine: 0 };
  while (offset < text.length) {
    const newline = text.indexOf('\n', offset);
    const end = newline === -1 ? text.length : newline;
    const current = text.slice(offset, end);
    if (jobsLine === 0) {
      if (JOBS_LINE.test(current)) jobsLine = line;
    } else if (!isBlankOrComment(current)) {
      const indent = indentOf(current);
      const isItem = /^[ ]*-(?: |$)/.test(current);
      if (itemIndent === -1) {
        if (!isItem) return undefined;
        itemIndent = indent;
        split.regionStart = offset;
        split.firstItemLine = line;
      }
      if (isItem && indent === itemIndent) {
        if (items % jobsPerPiece === 0) split.pieceStarts.push({ offset, line });
        items += 1;
      } else if (indent <= itemIndent) {
        // Only a new top-level key may end the list; anything else there is for the whole parse to judge.
        if (indent !== 0 || current.startsWith('-')) return undefined;
        split.regionEnd = offset;
        break;
      }
    }
    offset = end + 1;
    line += 1;
  }
  split.jobsLine = jobsLine;
  return items === 0 ? undefined : split;
}

function countLines(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** The header's `jobs` pair must be the line the split found, with no value of its own. */
function headerJobs(header: NodeIndex | undefined, value: unknown, jobsLine: number): NodeIndex | undefined {
  if (header?.kind !== 'map' || value === null || typeof value !== 'object' || (value as { jobs?: unknown }).jobs !== null) return undefined;
  const pair = header.pairs?.find((p) => p.key === 'jobs');
  if (pair === undefined || pair.keyStart?.line !== jobsLine || pair.keyStart.col !== 1 || (pair.value !== undefined && pair.value.kind !== 'other')) return undefined;
  return header;
}

/**
 * The manifest read piece by piece, or undefined when it must be read whole: its layout is not the
 * plain one, a piece has a syntax error (the whole parse reports it, with its exact position), or it
 * uses anchors (an alias may point into another piece).
 */
export function parseInPieces(text: string, jobsPerPiece = JOBS_PER_PIECE): Extract<PieceOutcome, { kind: 'parsed' }> | undefined {
  const split = splitJobs(text, jobsPerPiece);
  if (split === undefined) return undefined;
  // Blank lines in place of the items keep every later line on its own line number.
  const blankLines = '\n'.repeat(countLines(text, split.regionStart, split.regionEnd));
  const header = safeParse(`${text.slice(0, split.regionStart)}${blankLines}${text.slice(split.regionEnd)}`, 1, 0);
  if (header === undefined) return undefined;
  const root = headerJobs(header.index, header.value, split.jobsLine);
  if (root === undefined) return undefined;
  const jobs: unknown[] = [];
  const jobNodes: (NodeIndex | undefined)[] = [];
  for (const [i, start] of split.pieceStarts.entries()) {
    const end = split.pieceStarts[i + 1]?.offset ?? split.regionEnd;
    // A piece is the `jobs` sequence's part: one level below the top, as its items are in the file.
    const piece = safeParse(text.slice(start.offset, end), start.line, 1);
    if (piece === undefined || !Array.isArray(piece.value) || piece.index?.kind !== 'seq') return undefined;
    for (const value of piece.value) jobs.push(value);
    for (const node of piece.index.items ?? []) jobNodes.push(node);
  }
  const firstPiece = { line: split.firstItemLine, col: indentOfLine(text, split.regionStart) + 1 };
  const jobsIndex: NodeIndex = { kind: 'seq', start: firstPiece, items: jobNodes };
  const pairs = (root.pairs ?? []).map((pair) => (pair.key === 'jobs' ? { ...pair, value: jobsIndex } : pair));
  (header.value as { jobs: unknown }).jobs = jobs;
  return { kind: 'parsed', value: header.value, index: { ...root, pairs }, usesAnchors: false };
}

function indentOfLine(text: string, offset: number): number {
  return indentOf(text.slice(offset, offset + 200));
}

// A RangeError (nesting too deep) is left to the whole parse too: it decides the message.
function safeParse(text: string, firstLine: number, rootDepth: number): Extract<PieceOutcome, { kind: 'parsed' }> | undefined {
  try {
    const outcome = parsePiece(text, firstLine, rootDepth);
    return outcome.kind === 'parsed' && !outcome.usesAnchors ? outcome : undefined;
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
