import { spawn } from 'node:child_process';

/** How long an opener may take to fail before it is taken to have worked and left to run. */
const OPENER_FAILS_WITHIN_MS = 1500;

/** The system's own way to open a file with its default program. */
function opener(file: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [file] };
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', `"${file}"`] };
  return { command: 'xdg-open', args: [file] };
}

/**
 * Opens `file` with the platform's opener (xdg-open, open, start), detached so it outlives this
 * process. Resolves to undefined once it started (and did not fail at once), else to why not.
 */
export function openFile(file: string): Promise<string | undefined> {
  const { command, args } = opener(file);
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore', windowsVerbatimArguments: process.platform === 'win32' });
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    // Only the first word counts; the listeners stay, so a late event is never an unhandled one.
    const done = (reason: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.unref();
      resolve(reason);
    };
    child.on('error', (error: NodeJS.ErrnoException) => done(`${command}: ${error.code === 'ENOENT' ? 'not found' : error.message}`));
    child.once('spawn', () => {
      timer = setTimeout(() => done(undefined), OPENER_FAILS_WITHIN_MS);
    });
    child.once('exit', (code, signal) => {
      if (code === 0) done(undefined);
      else done(`${command} ended with ${code === null ? `signal ${signal}` : `exit code ${code}`}`);
    });
  });
}
