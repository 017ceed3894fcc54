import { existsSync } from 'node:fs';
import os from 'node:os';
import type { ServiceClient } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ManifestError } from '../manifest/errors.js';
import type { Manifest } from '../manifest/open.js';
import { check } from '../runner/index.js';
import type { Simulator } from '../sim/index.js';
import type { Ledger, LockHolder } from '../store/index.js';
import { claimLedger, discardLedger, lockedOrCopy, manifestPaths, openLedgerFor } from './ledger.js';

/** Where the service is: the built-in simulator, started in this process on a loopback port, or a URL with a token. */
export type ServiceAddress = { sim: true } | { baseUrl: string; token: string };

export interface ServiceSession {
  client: ServiceClient;
  baseUrl: string;
  /** Set under `sim`: the in-process simulator the client talks to. */
  simulator?: Simulator | undefined;
  close(): Promise<void>;
}

/**
 * The service client for a command or a call, and under `sim` the simulator it talks to. The
 * token goes to the client only. The client (undici) and the simulator load only here, with the
 * command that uses them.
 */
export async function openService(address: ServiceAddress, clock?: Clock): Promise<ServiceSession> {
  const { createServiceClient } = await import('../api/client.js');
  if ('sim' in address) {
    const { startSimulator } = await import('../sim/index.js');
    const simulator = await startSimulator({ port: 0, clock });
    const client = createServiceClient({ baseUrl: simulator.url, token: simulator.token, clock });
    const close = async (): Promise<void> => {
      await client.close();
      await simulator.close();
    };
    return { client, baseUrl: simulator.url, simulator, close };
  }
  const client = createServiceClient({ ...address, clock });
  return { client, baseUrl: address.baseUrl, close: () => client.close() };
}

export interface WorkRequest {
  manifest: Manifest;
  /** Its path as given, or `-` for jobs from no file (stdin, a value, an iterable), which `db` and `out` name. */
  manifestArg: string;
  db?: string | undefined;
  out?: string | undefined;
  /** A run locks the ledger; an estimate locks it too, or works on a copy while a run holds it. */
  run: boolean;
  command: string;
  clock: Clock;
  /** Asked before the ledger is opened: what it throws (no token) comes after the manifest's own problems. */
  address: () => ServiceAddress;
  /** An estimate works on a copy of the ledger: `busy` holds it. */
  onCopy: (busy: LockHolder) => void;
}

export type Work = Awaited<ReturnType<typeof openWork>>;

/**
 * What estimate and run share: the service and the manifest's ledger, open while `work` runs,
 * then closed, and a ledger this call created removed when the manifest turned out invalid.
 * A run's job list never changes under it: a second run refuses, an estimate takes a copy.
 */
export async function withWork<T>(request: WorkRequest, work: (opened: Work) => Promise<T>): Promise<T> {
  const opened = await openWork(request);
  let failure: unknown;
  try {
    return await work(opened);
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    await opened.close(failure);
  }
}

async function openWork(request: WorkRequest) {
  const { manifest, clock } = request;
  const paths = manifestPaths(request.manifestArg, request.db, request.out);
  let address: ServiceAddress;
  try {
    // Token and base URL first: a configuration error must not leave an empty ledger behind.
    address = request.address();
  } catch (error) {
    // A manifest wrong as written is the first thing to fix (exit 2): it is checked offline
    // before the missing token or bad base URL is reported.
    await check({ manifest });
    throw error;
  }
  const created = !existsSync(paths.db);
  const opened = await openLedgerFor(paths.db, 'read-write', clock);
  let ledger: Ledger = opened;
  try {
    await claimLedger(opened, paths.manifest);
    const holder = { pid: process.pid, host: os.hostname(), command: request.command };
    if (request.run) await opened.acquireRunLock(holder);
    else ledger = await lockedOrCopy(opened, holder, request.onCopy);
    const service = await openService(address, clock);
    return {
      manifest,
      paths,
      service,
      ledger,
      /** Given the error that ended the work: a ledger created for a manifest found invalid goes too. */
      close: async (error?: unknown) => {
        await service.close();
        // Releases the run lock once every change asked for is committed.
        await ledger.close();
        if (created && error instanceof ManifestError) await discardLedger(paths.db);
      },
    };
  } catch (error) {
    await ledger.close();
    await opened.close();
    throw error;
  }
}
