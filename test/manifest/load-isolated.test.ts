import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifestIsolated } from '../../src/manifest/load-isolated.js';
import { loadManifest } from '../../src/manifest/load.js';
import { ROOT } from '../helpers/cli.js';

/** The reader thread runs compiled JavaScript, as the CLI does. */
const WORKER = new URL(`file://${ROOT}/dist/src/manifest/load-worker.js`);

describe('loading a manifest on a thread of its own', () => {
  it('gives the very manifest loadManifest gives', async () => {
    for (const file of ['manifests/demo.yaml', 'manifests/images.yaml', 'test/fixtures/manifests/valid/full.yaml']) {
      expect(await loadManifestIsolated(file, {}, WORKER), file).toEqual(await loadManifest(file));
    }
  });

  it('gives the same errors: every problem of a manifest, a file that cannot be read', async () => {
    const bad = 'test/fixtures/manifests/invalid/job-shapes.yaml';
    const inThread = await loadManifestIsolated(bad, {}, WORKER).catch((error: unknown) => error);
    const inPlace = await loadManifest(bad).catch((error: unknown) => error);
    expect(inThread).toBeInstanceOf(ManifestError);
    expect((inThread as ManifestError).message).toBe((inPlace as ManifestError).message);
    expect((inThread as ManifestError).issues).toEqual((inPlace as ManifestError).issues);

    const missing = await loadManifestIsolated('no/such/manifest.yaml', {}, WORKER).catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: 'E_USAGE', exitCode: 2, message: 'cannot read the manifest no/such/manifest.yaml: no such file' });
  });
});
