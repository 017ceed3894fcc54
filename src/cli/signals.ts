/**
 * Ctrl-C and SIGTERM: the first asks the run to stop starting new work and to record what is
 * in flight (requests already sent are allowed to answer, so none becomes in doubt); the
 * second forces the exit at once. Everything committed to the ledger survives either way.
 */
export interface StopControl {
  signal: AbortSignal;
  dispose(): void;
}

export function installStopHandlers(log: (line: string) => void): StopControl {
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
    },
  };
}
