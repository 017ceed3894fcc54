#!/usr/bin/env node
/**
 * The entry point. Loading the CLI (yargs, undici, SQLite, zod) takes a few hundred ms, during
 * which a Ctrl-C, SIGTERM or SIGHUP would kill the process with no exit code of ours; so the
 * signal handlers go in first (with the guard that keeps a closed stdout or stderr from ending
 * the process) and the rest is loaded after them.
 */
import { keepRunningWhenOutputCloses } from './output.js';
import { exitOnSignalUntilHandled } from './signals.js';

/** Each command's handler returns its exit code through this holder (defined in app.ts). */
export type { CommandResult } from './app.js';

keepRunningWhenOutputCloses();
exitOnSignalUntilHandled();
const { start } = await import('./app.js');
start();
