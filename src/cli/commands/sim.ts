import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import type { CommandResult } from '../main.js';
import { logLine, writeStdout } from '../output.js';
import { nextStopSignal } from '../signals.js';

interface SimArgs {
  port: number;
  plan: 'basic' | 'premium' | 'unlimited';
  latency: number;
  faults?: string | undefined;
  seed: number;
  'job-error-rate': number;
  balance: number;
  pricing: 'linear' | 'minimum' | 'rounded';
}

export function simCommand(result: CommandResult): CommandModule<object, SimArgs> {
  return {
    command: 'sim',
    describe: 'run the built-in simulator of the service as a loopback HTTP server',
    builder: (y) =>
      y
        .option('port', { type: 'number', default: 0, describe: 'port on 127.0.0.1 (0: a free one)' })
        .option('plan', { choices: ['basic', 'premium', 'unlimited'] as const, default: 'premium' as const, describe: 'rate limits to enforce' })
        .option('latency', { type: 'number', default: 0, describe: 'ms added to every answer' })
        .option('faults', { type: 'string', describe: 'fault spec, e.g. "503=0.1,500-after=0.05,reset-after=0.02,submit:html502=0.05"' })
        .option('seed', { type: 'number', default: 1, describe: 'seed for faults and job outcomes' })
        .option('job-error-rate', { type: 'number', default: 0, describe: 'share of accepted jobs that end in error' })
        .option('balance', { type: 'number', default: 1000, describe: 'starting balance in USD' })
        .option('pricing', { choices: ['linear', 'minimum', 'rounded'] as const, default: 'linear' as const, describe: 'price law' }),
    handler: async (args) => {
      if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
        throw new UsageError(`--port: expected 0–65535, got ${args.port}`);
      }
      const { parseFaultSpec, startSimulator } = await import('../../sim/index.js');
      if (args.faults !== undefined) {
        try {
          parseFaultSpec(args.faults);
        } catch (error) {
          throw new UsageError(`--faults: ${(error as Error).message}`);
        }
      }
      const sim = await startSimulator({
        port: args.port,
        plan: args.plan,
        latencyMs: args.latency,
        faults: args.faults,
        seed: args.seed,
        jobErrorRate: args['job-error-rate'],
        balanceUsd: args.balance,
        pricing: args.pricing,
      });
      await writeStdout(`listening on ${sim.url}\ntoken ${sim.token}`);
      logLine(`simulator (${args.plan} plan); stop with Ctrl-C. Try: MEDIABATCH_TOKEN=${sim.token} mediabatch models --base-url ${sim.url}`);
      await nextStopSignal();
      await sim.close();
      result.exitCode = 0;
    },
  };
}
