import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each worker keeps its modules from one file to the next instead of loading the program
    // again for every file. Nothing in src/ keeps state in a module, and the helpers undo what
    // they change (environment, stdout and stderr, signal handlers).
    isolate: false,
    // Two cores in CI: the e2e and reliability files spawn CLIs of their own.
    maxWorkers: 2,
  },
});
