import { readFileSync } from 'node:fs';

/** The page module's import of the view module: in the page the two are one script. */
const VIEW_IMPORT = /^import \{[^}]*\} from '\.\/browser-view\.js';\n/m;
/** The build's copies end with a source map comment: inline, it would point at nothing. */
const SOURCE_MAP = /\n\/\/# sourceMappingURL=\S+\s*$/;

function read(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').replace(SOURCE_MAP, '\n');
}

/**
 * The review page's script as text, to inline: browser-view.js then browser-page.js beside this
 * module (in src/ for tests, copied to dist/ by the build), as one module without the import
 * that joins them. Read on each page written: two small files, no state kept.
 */
export function reviewPageScript(): string {
  const page = read('browser-page.js');
  if (!VIEW_IMPORT.test(page)) throw new Error('bug in mediabatch: browser-page.js does not import browser-view.js as browser-script.ts expects');
  return `${read('browser-view.js')}\n${page.replace(VIEW_IMPORT, '')}`;
}
