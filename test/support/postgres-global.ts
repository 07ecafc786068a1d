import { postgresBinDir } from './postgres';

/**
 * vitest's global setup: Postgres installed once, before the test files run in parallel (two
 * apt-get at once would fight over dpkg's lock). It never fails the run: where Postgres cannot be
 * had, the tests of crm-integration-sdk/postgres fail, each with the command to run (postgres.ts).
 */
export default function setup(): void {
  try {
    postgresBinDir();
  } catch {}
}
