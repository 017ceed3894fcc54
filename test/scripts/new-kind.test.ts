import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { scaffoldKind } from '../../scripts/scaffold.js';
import { call } from '../sim/helpers.js';

const NAME = 'img-sketch';
const TSC = resolve('node_modules/typescript/bin/tsc');

/** A copy of the sources with the scaffold run in it: the repository's own tree is never written. */
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mediabatch-new-kind-'));
  for (const entry of ['src', 'tsconfig.json', 'package.json']) await cp(entry, join(root, entry), { recursive: true });
  await symlink(resolve('node_modules'), join(root, 'node_modules'));
  scaffoldKind(root, NAME);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('npm run new-kind', () => {
  test('writes the two files and registers the kind in both lists', async () => {
    expect(await readFile(join(root, 'src/jobs/index.ts'), 'utf8')).toMatch(/import \{ imgSketch \} from '\.\/img-sketch\.js';[\s\S]*KINDS = \[[\s\S]*imgSketch,?\s*\] as const;/);
    expect(await readFile(join(root, 'src/sim/kinds/index.ts'), 'utf8')).toMatch(/import \{ imgSketch \} from '\.\/img-sketch\.js';[\s\S]*SIM_KINDS = \[[\s\S]*imgSketch,?\s*\] as const;/);
  });

  test('refuses a taken name or one the service would not use, writing nothing', () => {
    expect(() => scaffoldKind(root, NAME)).toThrow(`the kind "${NAME}" exists already`);
    expect(() => scaffoldKind(root, 'Img Upscale')).toThrow('is not a kind\'s name');
  });

  test('the new kind compiles with the modules that derive from the kinds', async () => {
    const config = join(root, 'tsconfig.check.json');
    const files = ['src/jobs/index.ts', 'src/sim/index.ts', 'src/manifest/read.ts', 'src/report/document-schemas.ts'];
    await writeFile(config, JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, include: [], files }));
    await expect(promisify(execFile)(process.execPath, [TSC, '-p', config])).resolves.toBeDefined();
  });

  test('the manifest accepts it, and the simulator prices and accepts what its job sends', async () => {
    const jobs = (await import(join(root, 'src/jobs/index.ts'))) as typeof import('../../src/jobs/index.js');
    const schema = (await import(join(root, 'src/manifest/schema.ts'))) as typeof import('../../src/manifest/schema.js');
    const sims = (await import(join(root, 'src/sim/index.ts'))) as typeof import('../../src/sim/index.js');
    expect(JSON.stringify(schema.manifestJsonSchema())).toContain(`"${NAME}"`);
    const kind = jobs.kindOf(NAME as Parameters<typeof jobs.kindOf>[0]);
    const job = { id: 'a', type: kind.type, params: { prompt: 'a lighthouse', model: 'imgSketch_model' }, media: {} };
    const sim = await sims.startSimulator({ extraModels: 0 });
    try {
      const models = await call(sim, `/api/v1/client/models?filter[inference_types]=${NAME}`);
      expect(models.body.data.map((m: { slug: string }) => m.slug)).toEqual(['imgSketch_model']);
      const priceRequest = kind.pricing.by === 'per-key' ? kind.pricing.request(job) : undefined;
      const submit = kind.submit(job);
      expect(priceRequest).toBeDefined();
      const price = await call(sim, `/api/v1/client/${priceRequest?.endpoint}`, { json: priceRequest && 'json' in priceRequest ? priceRequest.json : undefined });
      expect(price.body).toEqual({ data: { price: 0.001 } });
      const accepted = await call(sim, `/api/v1/client/${submit.endpoint}`, { json: 'json' in submit ? submit.json : undefined });
      expect(accepted.status).toBe(200);
      expect(sim.stats.accepted).toMatchObject([{ type: NAME }]);
      const refused = await call(sim, `/api/v1/client/${NAME}`, { json: { model: 'imgSketch_model' } });
      expect(refused.status).toBe(422);
    } finally {
      await sim.close();
    }
  });
});
