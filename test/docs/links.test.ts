import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** The pages a person reads in the repository: the README and every page in docs/. */
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

interface Link {
  page: string;
  line: number;
  target: string;
}

/** Fenced code blocks hold examples, not links: blanked, keeping the line count. */
function withoutCodeBlocks(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** Every `[text](target)` and `![alt](target)` of a page, inline code left out. */
function linksOf(page: string): Link[] {
  const lines = withoutCodeBlocks(readFileSync(path.join(ROOT, page), 'utf8')).split('\n');
  return lines.flatMap((text, i) =>
    [...text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({ page, line: i + 1, target: match[1] ?? '' })),
  );
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Why a link leads nowhere, or undefined when it leads to a file (and a heading) that exists. */
function brokenBecause(link: Link): string | undefined {
  const [file = '', anchor] = link.target.split('#');
  const target = file === '' ? path.join(ROOT, link.page) : path.resolve(path.dirname(path.join(ROOT, link.page)), decodeURIComponent(file));
  if (!existsSync(target)) return 'no such file';
  if (anchor === undefined || !target.endsWith('.md') || statSync(target).isDirectory()) return undefined;
  return anchorsOf(target).has(anchor) ? undefined : `no heading #${anchor}`;
}

describe('links in README.md and docs/', () => {
  const links = PAGES.flatMap(linksOf).filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target));

  test('finds the links it checks', () => {
    expect(PAGES).toContain('docs/manifest.md');
    expect(links.length).toBeGreaterThan(30);
  });

  test('every relative link points at a file that exists, and at a heading it has', () => {
    const broken = links.flatMap((link) => {
      const why = brokenBecause(link);
      return why === undefined ? [] : [`${link.page}:${link.line}: ${link.target} (${why})`];
    });
    expect(broken).toEqual([]);
  });
});
