#!/usr/bin/env node
/**
 * The entry point. Loading the CLI takes time, during which a Ctrl-C, SIGTERM or SIGHUP would
 * kill the process with no exit code of ours; so the signal handlers go in first (with the guard
 * that keeps a closed stdout or stderr from ending the process) and the rest is loaded after them.
 */
import { setFlagsFromString } from 'node:v8';
import { keepRunningWhenOutputCloses } from './output.js';
import { exitOnSignalUntilHandled } from './signals.js';

// V8 lets its old generation grow to about four times what is live before collecting it. Jobs
// stream through the ledger, so what is live stays small and the rest is garbage waiting:
// collecting at 1.5 times what is live lowers the peak RSS of `estimate` and `run --no-wait` of
// large manifests, in the same time. It caps nothing (a large heap still grows), and V8 reads it
// each time it sets the next limit.
setFlagsFromString('--heap-growing-percent=50');
keepRunningWhenOutputCloses();
exitOnSignalUntilHandled();
const { start } = await import('./app.js');
start();
