import { redisServerCommand } from './redis';

/**
 * vitest's global setup: redis-server installed once, before the test files run in parallel (two
 * apt-get at once would fight over dpkg's lock). It never fails the run: where redis-server cannot
 * be had, the tests of crm-integration-sdk/redis fail, each with the command to run (redis.ts).
 */
export default function setup(): void {
  try {
    redisServerCommand();
  } catch {}
}
