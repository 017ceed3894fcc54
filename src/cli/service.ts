import { createServiceClient } from '../api/client.js';
import type { ServiceClient } from '../api/types.js';
import type { Simulator } from '../sim/index.js';
import type { Clock } from '../clock.js';
import { readToken, resolveBaseUrl, type SharedArgs } from './options.js';

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
 */
export async function openService(args: SharedArgs, env: NodeJS.ProcessEnv, clock?: Clock): Promise<ServiceSession> {
  if (args.sim) {
    // Loaded only under --sim: a run against the real service never carries the simulator.
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
