/**
 * The thread a manifest is read on (see load-isolated.ts): it loads the manifest and posts back
 * the result, or the error as plain data.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isMediabatchError } from '../errors.js';
import { ManifestError } from './errors.js';
import { loadManifest, type LoadOptions } from './load.js';

const { path, options } = workerData as { path: string; options: LoadOptions };

try {
  parentPort?.postMessage({ manifest: await loadManifest(path, options) });
} catch (error) {
  if (error instanceof ManifestError) parentPort?.postMessage({ error: { kind: 'manifest', issues: error.issues } });
  else if (isMediabatchError(error)) parentPort?.postMessage({ error: { kind: 'usage', message: error.message, code: error.code, exitCode: error.exitCode } });
  else throw error;
}
