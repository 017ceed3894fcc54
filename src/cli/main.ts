#!/usr/bin/env node
/**
 * The entry point. Loading the CLI (yargs, undici, SQLite, zod) takes a few hundred ms, during
 * which a Ctrl-C, SIGTERM or SIGHUP would kill the process with no exit code of ours; so the
 * signal handlers go in first (with the guard that keeps a closed stdout or stderr from ending
 * the process) and the rest is loaded after them.
 */
import { setFlagsFromString } from 'node:v8';
import { keepRunningWhenOutputCloses } from './output.js';
import { exitOnSignalUntilHandled } from './signals.js';

/** Each command's handler returns its exit code through this holder (defined in app.ts). */
export type { CommandResult } from './app.js';

// V8 lets its old generation grow to about four times what is live before collecting it. Jobs
// stream through the ledger, so what is live stays near 30 MB and the rest is garbage waiting:
// collecting at 1.5 times what is live took the peak RSS of `estimate` of 100,000 rows from
// 255 MB to 205 MB and `run --no-wait` from 288 MB to 229 MB, in the same time. It caps
// nothing (a large heap still grows), and V8 reads it each time it sets the next limit.
setFlagsFromString('--heap-growing-percent=50');
keepRunningWhenOutputCloses();
exitOnSignalUntilHandled();
const { start } = await import('./app.js');
start();
