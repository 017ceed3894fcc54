/**
 * Ctrl-C, SIGTERM and SIGHUP (the terminal or ssh session closed): the first asks the run to
 * stop starting new work and to record what is in flight (requests already sent are allowed to
 * answer, so none becomes in doubt); the second forces the exit at once. Everything committed
 * to the ledger survives either way.
 */
import { logLine } from './output.js';

/** SIGHUP is a stop like the others: by default it would end the process with requests in flight. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onStopSignals(handler: (name: NodeJS.Signals) => void): () => void {
  for (const name of STOP_SIGNALS) process.on(name, handler);
  return () => {
    for (const name of STOP_SIGNALS) process.off(name, handler);
  };
}

export interface StopControl {
  signal: AbortSignal;
  dispose(): void;
}

/**
 * Until a command handles signals itself, the first stop signal exits at once with 130:
 * no generation request can be in flight then (a run sends none before its handlers are in).
 */
const exitNow = (name: NodeJS.Signals): void => {
  logLine(`${name}: stopped.`);
  process.exit(130);
};

export function exitOnSignalUntilHandled(): void {
  onStopSignals(exitNow);
}

function suspendExitNow(): () => void {
  for (const name of STOP_SIGNALS) process.off(name, exitNow);
  return exitOnSignalUntilHandled;
}

/** For a command that only waits for a signal to end (the simulator server). */
export function nextStopSignal(): Promise<NodeJS.Signals> {
  const restore = suspendExitNow();
  return new Promise((resolve) => {
    const off = onStopSignals((name) => {
      off();
      restore();
      resolve(name);
    });
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
  const off = onStopSignals(onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      off();
      restore();
    },
  };
}
