/**
 * Ctrl-C, SIGTERM and SIGHUP (the terminal or ssh session closed): the first asks the run to
 * stop starting new work and to record what is in flight (requests already sent are allowed to
 * answer, so none becomes in doubt); the second forces the exit at once. Everything committed
 * to the ledger survives either way.
 */
import type { InFlight } from '../runner/context.js';
import { logLine } from './output.js';

/** SIGHUP is a stop like the others: by default it would end the process with requests in flight. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onStopSignals(handler: (name: NodeJS.Signals) => void): () => void {
  for (const name of STOP_SIGNALS) process.on(name, handler);
  return () => {
    for (const name of STOP_SIGNALS) process.off(name, handler);
  };
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

/** While a stop waits for answers, a short reminder at this interval: silence reads as a hang. */
const REMINDER_MS = 10_000;

const requests = (n: number): string => (n === 1 ? '1 request' : `${n} requests`);

/**
 * A run's stop handlers. A stop waits for the submits in flight; each answers (or fails) within
 * the client's timeout for its kind, the longer one when an upload is among them. `onStop` hears
 * of each stop signal first (a log file records it); on the second one the process exits right
 * after it returns.
 */
export function installStopHandlers(
  inFlight: InFlight,
  timeoutsMs: { request: number; upload: number },
  onStop: (name: NodeJS.Signals, forced: boolean) => void,
): { signal: AbortSignal; dispose(): void } {
  const restore = suspendExitNow();
  const controller = new AbortController();
  let reminder: NodeJS.Timeout | undefined;
  const onSignal = (name: NodeJS.Signals): void => {
    const waiting = inFlight.submits;
    onStop(name, controller.signal.aborted);
    if (controller.signal.aborted) {
      const caught = waiting > 0 ? `${requests(waiting)} in flight become` : 'Jobs caught mid-submit become';
      logLine(`${name} again: exiting now. ${caught} "in doubt" on the next run.`);
      process.exit(130);
    }
    const again = name === 'SIGINT' ? 'press Ctrl-C again' : `send ${name} again`;
    controller.abort(new Error(`stopped by ${name}`));
    if (waiting === 0) {
      logLine(`${name}: stopping. Nothing more is sent; what is done is being recorded (${again} to force).`);
      return;
    }
    const uploads = inFlight.uploads > 0;
    const withinMs = uploads ? timeoutsMs.upload : timeoutsMs.request;
    const bound = uploads ? 'the timeout of video submits, which upload images' : 'the request timeout';
    logLine(`${name}: stopping: waiting for ${requests(waiting)} in flight to answer (up to ${seconds(withinMs)} s, ${bound}); ${again} to force: they would become in doubt.`);
    reminder = remindWhileWaiting(inFlight, withinMs, again);
  };
  const off = onStopSignals(onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      clearInterval(reminder);
      off();
      restore();
    },
  };
}

function seconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/** Every REMINDER_MS until no submit is in flight: how many are left and the most time they can take. */
function remindWhileWaiting(inFlight: InFlight, withinMs: number, again: string): NodeJS.Timeout {
  // Elapsed time on the monotonic clock: how long the requests may still take, not the hour.
  const deadlineMs = performance.now() + withinMs;
  const timer = setInterval(() => {
    const waiting = inFlight.submits;
    if (waiting === 0) return clearInterval(timer);
    logLine(`still waiting for ${requests(waiting)} in flight (at most ${seconds(deadlineMs - performance.now())} s more); ${again} to force.`);
  }, REMINDER_MS);
  timer.unref();
  return timer;
}
