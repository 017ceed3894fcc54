/** `npm run new-kind -- NAME`: a new kind's job and simulator files from the template, registered (scripts/scaffold.ts). */
import { scaffoldKind } from './scaffold.js';

const name = process.argv[2];
if (name === undefined || process.argv.length > 3) {
  console.error('usage: npm run new-kind -- NAME   (the endpoint\'s name, e.g. img-upscale)');
  process.exit(2);
}
try {
  for (const file of scaffoldKind('.', name)) console.log(`wrote ${file}`);
  console.log('registered in src/jobs/index.ts and src/sim/kinds/index.ts; fill in the two files, then run: npm run generate');
} catch (error) {
  console.error(`new-kind: ${(error as Error).message}`);
  process.exit(2);
}
