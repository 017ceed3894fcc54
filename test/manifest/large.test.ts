import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { writeLargeManifest } from '../../bench/manifest-bench.js';
import { loadManifest } from '../support/load-manifest.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediabatch-large-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Speed is measured by bench/manifest-bench.ts; this only proves 10,000 jobs load correctly.
test('a generated 10,000-job manifest validates, every job with its own id', async () => {
  const path = await writeLargeManifest(dir, 10_000, writeFile);
  const manifest = await loadManifest(path);
  expect(manifest.jobs).toHaveLength(10_000);
  expect(new Set(manifest.jobs.map((job) => job.id)).size).toBe(10_000);
  expect(manifest.jobs.filter((job) => job.type === 'img2video')).toHaveLength(2_000);
});
