import { readFileSync } from 'node:fs';

/**
 * The review page's script as text, to inline: `browser-app.js` beside this module (in src/ for
 * tests, copied to dist/ by the build). Read on each page written: one small file, no state kept.
 */
export function reviewPageScript(): string {
  // The build's copy ends with a source map comment: inline, it would point at nothing.
  return readFileSync(new URL('./browser-app.js', import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
}
