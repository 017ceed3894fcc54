#!/usr/bin/env node
/**
 * The entry point. Loading the CLI (yargs, undici, SQLite, zod) takes a few hundred ms, during
 * which a Ctrl-C or SIGTERM would kill the process with no exit code of ours; so the signal
 * handlers go in first and the rest is loaded after them.
 */
import { exitOnSignalUntilHandled } from './signals.js';

/** Each command's handler returns its exit code through this holder (defined in app.ts). */
export type { CommandResult } from './app.js';

exitOnSignalUntilHandled();
const { start } = await import('./app.js');
start();
