import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  // What tsup.config.ts writes into the build: the version the User-Agent names.
  define: { __SDK_VERSION__: JSON.stringify(version) },
  // Examples import the package by name; in tests that name means the source.
  resolve: {
    alias: [
      {
        find: /^crm-integration-sdk\/otel$/,
        replacement: fileURLToPath(new URL('./src/otel/index.ts', import.meta.url)),
      },
      { find: /^crm-integration-sdk$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    // redis-server for test/redis and Postgres for test/postgres, installed once where they are
    // missing and may be (test/support/redis.ts, test/support/postgres.ts).
    globalSetup: ['test/support/redis-global.ts', 'test/support/postgres-global.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'tsconfig.json' },
    // A bound for a test that hangs, not a speed: the CLI tests spawn processes, and on a busy
    // machine (a CI runner, a laptop building) one start of node took 3 s, several tests 5 to 20 s.
    // Whatever depends on time runs on fake timers or an injected clock.
    testTimeout: 60_000,
    // Two files at once on two cores (vitest's default is one fewer than the cores: one): many
    // files wait on real sockets, a real Redis or spawned processes, and another file runs meanwhile.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    hookTimeout: 60_000,
    restoreMocks: true,
    unstubEnvs: true,
  },
});
