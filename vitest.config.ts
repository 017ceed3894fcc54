import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores in CI: the e2e and reliability files spawn CLIs of their own.
    maxWorkers: 2,
  },
});
