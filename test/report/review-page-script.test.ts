import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { decimalUsd } from '../../src/money.js';
import { formatMicroUsd, parseView, pipelineLinks, selectRows, splitTag, viewHash, type PageMeta, type RowTuple } from '../../src/report/review-page/browser-view.js';
import { ROOT } from '../helpers/cli.js';

describe("the review page's browser script", () => {
  it('type-checks against the DOM (tsconfig.browser.json, strict)', () => {
    const configFile = path.join(ROOT, 'tsconfig.browser.json');
    const read = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
    const config = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT, undefined, configFile);
    expect(config.fileNames).toEqual(['browser-view.js', 'browser-page.js'].map((name) => path.join(ROOT, 'src/report/review-page', name)));
    const program = ts.createProgram(config.fileNames, config.options);
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
    expect(ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), host)).toBe('');
  });

  it('formats micro-dollars exactly as the CSV does', () => {
    for (const micro of [0, 1, 77, 1_000, 42_300, 500_000, 1_000_000, 1_250_000, 12_345_678_901, -250_000]) {
      expect(formatMicroUsd(micro)).toBe(`${micro < 0 ? '-' : ''}$${decimalUsd(Math.abs(micro))}`);
    }
  });

  it('reads `key:value` and `key=value` tags as a key and a value, anything else as a plain tag', () => {
    expect(splitTag('scene:intro')).toEqual(['scene', 'intro']);
    expect(splitTag('variant=b')).toEqual(['variant', 'b']);
    expect(splitTag('book')).toBeNull();
    expect(splitTag(':x')).toBeNull();
    expect(splitTag('x:')).toBeNull();
  });

  it('keeps a view in the location hash, and reads back what it wrote', () => {
    const view = { q: 'a mug & more', state: 'failed,in_doubt', kind: '', model: 'Kokoro', tag: 'scene:intro', group: 'tag:scene', page: 3, size: 250 };
    expect(parseView(viewHash(view))).toEqual(view);
    expect(viewHash(parseView(''))).toBe('');
    expect(parseView('#size=7&page=-2')).toMatchObject({ size: 100, page: 0 });
  });

  it('filters, searches and groups: groups in the order they first appear, manifest order inside', () => {
    const meta: PageMeta = { format: 1, states: ['done', 'failed'], kinds: [{ name: 'k', media: 'audio' }], models: ['m1', 'm2'], sources: [], groups: [] };
    const row = (id: string, state: number, model: number, tags: string[], text: string): RowTuple => [id, 0, state, 1, 1, model, -1, -1, null, text, tags, null, null, 0, null];
    const rows = [
      row('a1', 0, 0, ['scene:a', 'variant:1'], 'hello world'),
      row('b1', 1, 0, ['scene:b', 'variant:1'], 'good night'),
      row('a2', 0, 1, ['scene:a', 'variant:2'], 'hello there'),
      row('c1', 0, 1, ['variant:1'], 'HELLO again'),
    ];
    const haystack = (i: number): string => `${rows[i]![0]} ${rows[i]![9]} ${rows[i]![10].join(' ')}`.toLowerCase();
    const view = parseView('');
    const ids = (selected: ReturnType<typeof selectRows>): string[] => selected.order.map((i) => rows[i]![0]);

    const grouped = selectRows(rows, meta, { ...view, group: 'tag:scene' }, haystack);
    expect(ids(grouped)).toEqual(['a1', 'a2', 'b1', 'c1']);
    expect(grouped.keys).toEqual(['a', 'a', 'b', '(no scene tag)']);
    expect([...grouped.sizes]).toEqual([['a', 2], ['b', 1], ['(no scene tag)', 1]]);
    expect(ids(selectRows(rows, meta, { ...view, state: 'failed' }, haystack))).toEqual(['b1']);
    expect(ids(selectRows(rows, meta, { ...view, q: 'hello  VARIANT:1' }, haystack))).toEqual(['a1', 'c1']);
    expect(ids(selectRows(rows, meta, { ...view, model: 'm2', tag: 'variant:2' }, haystack))).toEqual(['a2']);
    expect(selectRows(rows, meta, view, haystack).keys).toBeNull();
  });
});

describe('a pipeline on the review page', () => {
  const row = (id: string, inputs?: Record<string, string>): RowTuple => {
    const tuple: RowTuple = [id, 0, 0, 1, 1, -1, -1, -1, null, null, [], null, null, 0, null];
    if (inputs !== undefined) tuple.push(inputs);
    return tuple;
  };

  it('finds each job\'s row and its dependents from the inputs the rows carry, each dependent once', () => {
    const links = pipelineLinks([
      row('poster'),
      row('narration'),
      row('talking', { audio: 'narration', first_frame_image: 'poster' }),
      row('collage', { 'images.0': 'poster', 'images.1': 'poster' }),
    ]);
    expect(links?.dependents).toEqual(new Map([['narration', ['talking']], ['poster', ['talking', 'collage']]]));
    expect(links?.rowOf.get('talking')).toBe(2);
  });

  it('has nothing to link when no job takes another\'s result', () => {
    expect(pipelineLinks([row('a'), row('b')])).toBeNull();
  });
});
