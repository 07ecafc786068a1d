// crm-integration-sdk/redis: the pace of `throttle: 'auto'` shared by every process that uses one
// store (README.md, "Bulk work and rate limits"). Node only; ioredis (or iovalkey) is an optional
// peer dependency, which the caller's own client brings: nothing here imports it.
import type { PaceStore } from '../core/pace-store';
import { MemoryStore, rememberMsOf } from './memory-store';
import { sharedPaceStore } from './shared';

export type {
  PaceLearned,
  PaceLease,
  PaceReservation,
  PaceStore,
} from '../core/pace-store';
export { type RedisScriptClient, type RedisStoreOptions, redisStore } from './redis-store';
export { sharedPaceStore } from './shared';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * How long (ms) a key's rate, once learned, is kept after the key's last use, so that its next
   * job starts at it rather than cold: a whole number from 0 (kept as long as the schedule, 15
   * minutes) to a year. Default: 7 days. A starting point, not a ceiling: the first refusal
   * corrects it, and the pace climbs past it after a quiet time.
   */
  rememberMs?: number | undefined;
}

/**
 * A `PaceStore` in this process's memory: what every store does, step by step (the reference for
 * one of your own), and what `throttle: 'auto'` does without one. Shares a pace between clients
 * of one process only; a rate learned is kept `rememberMs` (7 days) after the key's last use.
 */
export const memoryStore = (options: MemoryStoreOptions = {}): PaceStore =>
  sharedPaceStore(new MemoryStore(undefined, rememberMsOf(options?.rememberMs, 'memoryStore()')));
