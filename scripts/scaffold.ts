/**
 * Writes a new kind's two files from a template (a kind that checks a prompt and a model, has one
 * price per model and makes a PNG) and adds it to the two lists: src/jobs/index.ts and
 * src/sim/kinds/index.ts. What else a kind needs is derived (`npm run generate`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** An endpoint's name as the service spells them: lower case, digits, inner hyphens (`img-upscale`). */
const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

const identifier = (name: string): string => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

const jobTemplate = (name: string, id: string): string => `import { model, text } from './fields.js';
import { defineKind, type JobKind } from './kind.js';

/** \`POST /${name}\`, JSON; the result is an image. Written by \`npm run new-kind\`: give it the service's fields. */
export const ${id}: JobKind<'${name}'> = defineKind({
  type: '${name}',
  title: '${name}',
  params: { model: model('${id}_model') },
  content: { prompt: text('What to make') },
  // What its price depends on: the price request takes these fields and nothing else.
  pricing: { by: 'per-key', keyFields: ['model'] },
  media: 'image',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
`;

const simTemplate = (name: string, id: string): string => `/**
 * \`POST /${name}\`, JSON; the result is a PNG. Written by \`npm run new-kind\`: give it the service's
 * models, checks and price law.
 */
import { defineKind } from './kind.js';

const USD_PER_JOB = 0.001;

export const ${id} = defineKind({
  type: '${name}',
  models: [{ name: '${name} model', slug: '${id}_model' }],
  // A price query takes the model; a submit the prompt too.
  check: (c, forPrice) => ({ prompt: forPrice ? null : c.string('prompt') }),
  usd: (p) => USD_PER_JOB * p.model.priceFactor,
  media: 'image',
  plans: { basic: { perMinute: 1, perDay: 15 }, premium: { perMinute: 300 } },
});
`;

/** Adds `id` to the list `listName` of the module at `path`, with its import after the others. */
function register(path: string, listName: string, id: string, file: string): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  const lastImport = lines.findLastIndex((line) => /^import .* from '\.\/.*\.js';$/.test(line));
  const list = lines.findIndex((line) => line.startsWith(`export const ${listName} = [`));
  if (lastImport === -1 || list === -1) throw new Error(`${path}: cannot find its imports or \`export const ${listName} = [\``);
  // The list on one line, or one entry a line up to its closing `] as const;`.
  const end = lines.findIndex((line, n) => n >= list && line.endsWith('] as const;'));
  if (end === list) lines[list] = (lines[list] ?? '').replace(/\] as const;$/, `, ${id}] as const;`);
  else lines.splice(end, 0, `  ${id},`);
  lines.splice(lastImport + 1, 0, `import { ${id} } from './${file}.js';`);
  writeFileSync(path, lines.join('\n'));
}

/** The two files written, relative to `root`; throws on a bad or taken name, writing nothing. */
export function scaffoldKind(root: string, name: string): string[] {
  if (!NAME.test(name)) throw new Error(`"${name}" is not a kind's name: lower-case letters, digits and inner hyphens, as the service names its endpoint (e.g. img-upscale)`);
  const files = [`src/jobs/${name}.ts`, `src/sim/kinds/${name}.ts`];
  const taken = files.filter((file) => existsSync(join(root, file)));
  if (taken.length > 0) throw new Error(`the kind "${name}" exists already: ${taken.join(', ')}`);
  const id = identifier(name);
  writeFileSync(join(root, files[0] ?? ''), jobTemplate(name, id));
  writeFileSync(join(root, files[1] ?? ''), simTemplate(name, id));
  register(join(root, 'src/jobs/index.ts'), 'KINDS', id, name);
  register(join(root, 'src/sim/kinds/index.ts'), 'SIM_KINDS', id, name);
  return files;
}
