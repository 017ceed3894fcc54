/** Per-test wiring: a scripted server and a client pointed at it, both closed after each test. */
import { afterEach } from 'vitest';
import { createServiceClient, type ServiceClientOptions } from '../../src/api/client.js';
import type { ServiceClient } from '../../src/api/types.js';
import { startScriptedServer, type Script, type ScriptedServer } from './scripted-server.js';

export const TOKEN = 'test-token-0123456789';

/** Registers an afterEach that closes what `track` was given, newest first. */
export function useCleanup(): (close: () => Promise<void>) => void {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return (close) => closers.push(close);
}

export function useScripted(): (
  script: Script,
  options?: Partial<ServiceClientOptions>,
) => Promise<{ server: ScriptedServer; client: ServiceClient }> {
  const track = useCleanup();
  return async (script, options = {}) => {
    const server = await startScriptedServer(script);
    track(() => server.close());
    const client = createServiceClient({ baseUrl: server.url, token: TOKEN, ...options });
    track(() => client.close());
    return { server, client };
  };
}

export const TTS_JOB = {
  text: 'Welcome to the show.',
  model: 'Kokoro',
  voice: 'af_sky',
  lang: 'en-us',
  speed: 1,
  format: 'mp3',
  sample_rate: 24000,
};

/** The text-to-speech submit of TTS_JOB, as its kind describes it to the client. */
export const TTS_REQUEST = { endpoint: 'txt2audio', json: TTS_JOB };

/** Resolves to the rejection of `promise` (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got a value');
}
