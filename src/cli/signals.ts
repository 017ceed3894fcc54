/**
 * Ctrl-C and SIGTERM: the first asks the run to stop starting new work and to record what is
 * in flight (requests already sent are allowed to answer, so none becomes in doubt); the
 * second forces the exit at once. Everything committed to the ledger survives either way.
 */
import { logLine } from './output.js';

export interface StopControl {
  signal: AbortSignal;
  dispose(): void;
}

/**
 * Until a command handles signals itself, the first Ctrl-C or SIGTERM exits at once with 130:
 * no generation request can be in flight then (a run sends none before its handlers are in).
 */
const exitNow = (name: NodeJS.Signals): void => {
  logLine(`${name}: stopped.`);
  process.exit(130);
};

export function exitOnSignalUntilHandled(): void {
  process.on('SIGINT', exitNow);
  process.on('SIGTERM', exitNow);
}

function suspendExitNow(): () => void {
  process.off('SIGINT', exitNow);
  process.off('SIGTERM', exitNow);
  return exitOnSignalUntilHandled;
}

/** For a command that only waits for a signal to end (the simulator server). */
export function nextStopSignal(): Promise<NodeJS.Signals> {
  const restore = suspendExitNow();
  return new Promise((resolve) => {
    const onSignal = (name: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      restore();
      resolve(name);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

export function installStopHandlers(log: (line: string) => void): StopControl {
  const restore = suspendExitNow();
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      log(`${name} again: exiting now. Jobs caught mid-submit become "in doubt" on the next run.`);
      process.exit(130);
    }
    log(`${name}: stopping. Requests in flight are finishing and being recorded (press Ctrl-C again to force).`);
    controller.abort(new Error(`stopped by ${name}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      restore();
    },
  };
}
