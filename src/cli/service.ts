import { readFileSync } from 'node:fs';
import type { ServiceClient } from '../api/types.js';
import { parseBaseUrl } from '../api/base-url.js';
import { ConfigError } from '../errors.js';
import type { Simulator } from '../sim/index.js';
import type { Clock } from '../clock.js';
import type { SharedArgs } from './options.js';

export const DEFAULT_BASE_URL = 'https://api.deapi.ai';

export interface ServiceSession {
  client: ServiceClient;
  baseUrl: string;
  /** Set under --sim: the in-process simulator the client talks to. */
  simulator?: Simulator | undefined;
  close(): Promise<void>;
}

/**
 * Builds the service client for a command: against --base-url with the user's token, or against
 * an in-process simulator on a loopback port under --sim. The token goes to the client only.
 * The client (undici) and the simulator load only here, with the command that uses them.
 */
export async function openService(args: SharedArgs, env: NodeJS.ProcessEnv, clock?: Clock): Promise<ServiceSession> {
  const { createServiceClient } = await import('../api/client.js');
  if (args.sim) {
    const { startSimulator } = await import('../sim/index.js');
    const simulator = await startSimulator({ port: 0, clock });
    const client = createServiceClient({ baseUrl: simulator.url, token: simulator.token, clock });
    return {
      client,
      baseUrl: simulator.url,
      simulator,
      close: async () => {
        await client.close();
        await simulator.close();
      },
    };
  }
  const baseUrl = resolveBaseUrl(args, env);
  const client = createServiceClient({ baseUrl, token: readToken(args, env), clock });
  return { client, baseUrl, close: () => client.close() };
}

/** The base URL from --base-url, else MEDIABATCH_BASE_URL, else the service's, checked by parseBaseUrl. */
export function resolveBaseUrl(args: SharedArgs, env: NodeJS.ProcessEnv): string {
  const fromFlag = args['base-url'];
  const fromEnv = env['MEDIABATCH_BASE_URL'];
  if (fromFlag !== undefined) return parseBaseUrl(fromFlag, '--base-url').text;
  if (fromEnv !== undefined) return parseBaseUrl(fromEnv, 'MEDIABATCH_BASE_URL').text;
  return DEFAULT_BASE_URL;
}

/**
 * The token, from `--token-file` or MEDIABATCH_TOKEN only: a `--token` flag would show in `ps`
 * and in shell history. The value never goes into a message.
 */
export function readToken(args: SharedArgs, env: NodeJS.ProcessEnv): string {
  const file = args['token-file'];
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(`--token-file ${file}: cannot read it (${code}); give a readable file holding the API token`, 'E_TOKEN');
    }
    const token = text.trim();
    if (token === '') throw new ConfigError(`--token-file ${file} is empty; put the API token in it`, 'E_TOKEN');
    if (/\s/.test(token)) throw new ConfigError(`--token-file ${file}: expected one token on one line`, 'E_TOKEN');
    return token;
  }
  const token = env['MEDIABATCH_TOKEN']?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError(
      'no API token: set MEDIABATCH_TOKEN or pass --token-file PATH (or try --sim to use the built-in simulator)',
      'E_TOKEN',
    );
  }
  return token;
}
