// crm-integration-sdk/redis: the pace of `throttle: 'auto'` shared by every process that uses one
// store (README.md, "Bulk work and rate limits"). Node only; ioredis (or iovalkey) is an optional
// peer dependency, which the caller's own client brings: nothing here imports it.
import type { PaceStore } from '../core/pace-store';
import { MemoryStore } from './memory-store';
import { sharedPaceStore } from './shared';

export type {
  PaceLearned,
  PaceLease,
  PaceReservation,
  PaceStore,
} from '../core/pace-store';
export { type RedisScriptClient, type RedisStoreOptions, redisStore } from './redis-store';
export { sharedPaceStore } from './shared';

/**
 * A `PaceStore` in this process's memory: what every store does, step by step (the reference for
 * one of your own), and what `throttle: 'auto'` does without one. Shares a pace between clients
 * of one process only.
 */
export const memoryStore = (): PaceStore => sharedPaceStore(new MemoryStore());
