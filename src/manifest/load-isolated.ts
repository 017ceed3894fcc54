import { Worker } from 'node:worker_threads';
import { MediabatchError, type ExitCodeValue } from '../errors.js';
import { ManifestError, type ManifestIssue } from './errors.js';
import type { LoadOptions } from './load.js';
import type { Manifest } from './types.js';

type Reply =
  | { manifest: Manifest }
  | { error: { kind: 'manifest'; issues: ManifestIssue[] } | { kind: 'usage'; message: string; code: string; exitCode: ExitCodeValue } };

/**
 * `loadManifest` on a thread of its own, for the CLI. Reading YAML builds a syntax tree and a
 * Document many times the size of the jobs they hold (a 10,000-job manifest: ~80 MB live while it
 * is read); on the main thread V8 sizes its old generation from that peak and keeps the garbage
 * for the rest of the run. On a worker, that heap goes when the worker ends, and only the jobs
 * come back. Same function, same errors; tests call `loadManifest` itself.
 */
export async function loadManifestIsolated(path: string, options: LoadOptions = {}, workerUrl = new URL('./load-worker.js', import.meta.url)): Promise<Manifest> {
  const reply = await new Promise<Reply>((resolve, reject) => {
    const worker = new Worker(workerUrl, { workerData: { path, options } });
    worker.once('message', (message: Reply) => resolve(message));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`bug in mediabatch: the manifest reader stopped (exit code ${code}) without an answer`)));
  });
  if ('manifest' in reply) return reply.manifest;
  const { error } = reply;
  if (error.kind === 'manifest') throw new ManifestError(error.issues);
  throw new MediabatchError(error.message, { code: error.code, exitCode: error.exitCode });
}
