import { ManifestError } from '../../src/manifest/errors.js';
import { loadManifest } from '../support/load-manifest.js';

/** Fixture paths relative to the repository root (vitest's cwd), so messages are stable. */
export const FIXTURES = 'test/fixtures/manifests';

/** The full message a user would see for a manifest that must be rejected. */
export async function rejection(path: string): Promise<ManifestError> {
  try {
    await loadManifest(path);
  } catch (error) {
    if (error instanceof ManifestError) return error;
    throw error;
  }
  throw new Error(`${path} was accepted but must be rejected`);
}

export async function messageOf(path: string): Promise<string> {
  return (await rejection(path)).message;
}
