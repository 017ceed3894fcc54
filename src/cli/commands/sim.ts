import type { Argv } from 'yargs';
import { ConfigError, UsageError } from '../../errors.js';
import type { Simulator, SimOptions } from '../../sim/index.js';
import { DEFAULT_LISTEN, parseBudget, parseListen, parseNumber, PLAN_CHOICES } from '../../lib/options.js';
import { logLine, writeStdout } from '../output.js';
import { nextStopSignal } from '../signals.js';

/** The numeric options are read as typed: each is parsed by one function of options.ts, which quotes it back. */
export function builder(y: Argv) {
  return y
    .option('port', { type: 'string', describe: 'port on 127.0.0.1 (default 0: a free one)' })
    .option('plan', { choices: PLAN_CHOICES, default: 'premium' as const, describe: 'rate limits to enforce' })
    .option('latency', { type: 'string', describe: 'ms added to every answer (default 0)' })
    .option('faults', { type: 'string', describe: 'fault spec, e.g. "503=0.1,500-after=0.05,reset-after=0.02,submit:html502=0.05"' })
    .option('seed', { type: 'string', describe: 'seed for faults and job outcomes (default 1)' })
    .option('job-error-rate', { type: 'string', describe: 'share of accepted jobs that end in error, 0 to 1 (default 0)' })
    .option('balance', { type: 'string', describe: 'starting balance in USD (default 1000)' })
    .option('pricing', { choices: ['linear', 'minimum', 'rounded'] as const, default: 'linear' as const, describe: 'price law' })
    .option('webhooks', {
      type: 'string',
      describe: `deliver webhooks of jobs sent with webhook_url to a receiver at HOST:PORT (alone: ${DEFAULT_LISTEN}, where run --webhook-url listens by default)`,
    });
}

type SimArgs = Awaited<ReturnType<typeof builder>['argv']>;

export async function handler(args: SimArgs): Promise<number> {
  const options = await simOptions(args);
  const sim = await listen(options);
  await writeStdout(`listening on ${sim.url}\ntoken ${sim.token}`);
  if (options.webhookTarget !== undefined) logLine(`webhooks of jobs sent with webhook_url go to ${options.webhookTarget}`);
  logLine(`simulator (${args.plan} plan); stop with Ctrl-C. Try: MEDIABATCH_TOKEN=${sim.token} mediabatch models --base-url ${sim.url}`);
  await nextStopSignal();
  await sim.close();
  return 0;
}

/** Every option checked before the simulator starts: a bad value is a usage error naming it. */
async function simOptions(args: SimArgs): Promise<SimOptions & { port: number }> {
  const share = 'a share from 0 to 1 (such as 0.1)';
  const options = {
    port: parseNumber('--port', args.port, { min: 0, max: 65_535 }) ?? 0,
    plan: args.plan,
    latencyMs: parseNumber('--latency', args.latency, { min: 0, max: 600_000, unit: 'milliseconds' }) ?? 0,
    faults: args.faults,
    seed: parseNumber('--seed', args.seed, { min: 0, max: 0xffff_ffff }) ?? 1,
    jobErrorRate: parseNumber('--job-error-rate', args['job-error-rate'], { min: 0, max: 1, decimal: true, expected: share }) ?? 0,
    balanceUsd: parseBudget(args.balance, '--balance') ?? 1000,
    pricing: args.pricing,
    webhookTarget: args.webhooks === undefined ? undefined : webhookTarget(args.webhooks),
  };
  if (args.faults !== undefined) {
    const { parseFaultSpec } = await import('../../sim/index.js');
    try {
      parseFaultSpec(args.faults);
    } catch (error) {
      throw new UsageError(`--faults: ${(error as Error).message}`);
    }
  }
  return options;
}

/** `http://HOST:PORT` of the receiver the simulator delivers to. */
function webhookTarget(text: string): string {
  const { host, port } = parseListen('--webhooks', text === '' ? DEFAULT_LISTEN : text);
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * A port that cannot be had is the machine's state, not a malformed command line (the same
 * command works once the port is free): exit 4, like a ledger another run holds.
 */
async function listen(options: SimOptions & { port: number }): Promise<Simulator> {
  const { startSimulator } = await import('../../sim/index.js');
  const { port } = options;
  try {
    return await startSimulator(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new ConfigError(`--port ${port}: another program already listens on 127.0.0.1:${port}; pick another port, or --port 0 for a free one`, 'E_PORT_IN_USE', error);
    }
    if (code === 'EACCES') {
      throw new ConfigError(`--port ${port}: not allowed to listen on 127.0.0.1:${port} (ports below 1024 need privileges); pick a port from 1024 up, or --port 0 for a free one`, 'E_PORT_DENIED', error);
    }
    throw error;
  }
}
