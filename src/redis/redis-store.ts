import { createHash, createHmac } from 'node:crypto';
import type { PaceLearned, PaceLease, PaceReservation, PaceStore } from '../core/pace-store';
import { QUIET_TIMES, RATES, rememberedForm } from '../internal/waiting/pacer';
import { rememberMsOf } from './memory-store';
import { PACE_SCRIPT } from './pace-script';
import { sharedPaceStore } from './shared';

/**
 * What `redisStore()` uses of a Redis client: an `ioredis` client (`new Redis()`), or an
 * `iovalkey` one, its Valkey twin, fits as it is.
 */
export interface RedisScriptClient {
  /** Runs a loaded script by its SHA-1. */
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `SCRIPT LOAD`: has Redis keep the script, when it does not know its SHA-1 (yet, or any more). */
  script(subcommand: 'LOAD', script: string): Promise<unknown>;
  /** The connection's state (`'ready'`, `'reconnecting'`, `'end'`...). */
  readonly status?: string;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /**
   * Put before every key the store writes, so that two apps (or two environments) on one Redis
   * keep apart: letters, digits and `:_.-`, at most 100. Default: `'crm-pace:'`.
   */
  prefix?: string | undefined;
  /**
   * The secret of the keyed hash (HMAC-SHA256) that stands for an API key in Redis: the same in
   * every worker that shares a pace. Default: none, the prefix keys the hash; an API key, long
   * and random, is not found again from it, but a secret of yours keeps even a short one safe
   * from anyone who reads Redis.
   */
  secret?: string | undefined;
  /**
   * How long (ms) a key's rate, once learned, stays in Redis after the key's last use, so that the
   * tenant's next job (a night later, in new processes) starts at it rather than cold: a whole
   * number from 0 (forgotten with the schedule, 15 minutes after the last use) to a year. Default:
   * 7 days. What is kept is the rate, when it was learned, the refusals it took and a fingerprint
   * of the base URL, under the keyed hash of the API key (a rotated key starts cold). A starting
   * point, not a ceiling: the first refusal corrects it, and the pace climbs past it after a quiet time.
   */
  rememberMs?: number | undefined;
}

const PREFIX = /^[\w:.-]{1,100}$/;
/** A base URL's fingerprint, as the SDK writes it (shared-pacer.ts). */
const FINGERPRINT = /^[0-9a-f]{1,64}$/;
/** How long a key nobody uses is kept in Redis: a learned rate is worth keeping a while. */
const KEEP_MS = 15 * 60_000;
const SHA = createHash('sha1').update(PACE_SCRIPT).digest('hex');

/**
 * A `PaceStore` in Redis (or Valkey), for `throttle: { mode: 'auto', store }`: every process whose
 * clients use a store over the same Redis and prefix paces each key as one (README.md, "Bulk
 * work and rate limits"). Each step is one script run (EVALSHA), atomic on the server, on the
 * server's clock; a worker asks once for a few turns. A key is kept in Redis as a keyed hash
 * of it, never as it is; the schedule's Redis keys expire after 15 minutes unused, what was learned
 * of the rate after `rememberMs` (7 days), so that the tenant's next job starts at it.
 *
 * When Redis fails or answers late (100 ms), the calls go on, each key paced in its process
 * alone, with one warning in the client's log; the store is tried again every 5 s.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { redisStore } from 'crm-integration-sdk/redis';
 *
 * const store = redisStore(new Redis(process.env.REDIS_URL));
 * const crm = new CrmClient({ throttle: { mode: 'auto', store } });
 * ```
 */
export function redisStore(client: RedisScriptClient, options: RedisStoreOptions = {}): PaceStore {
  if (typeof client?.evalsha !== 'function' || typeof client.script !== 'function') {
    throw new TypeError('redisStore(client): client must be an ioredis (or iovalkey) client');
  }
  const { prefix = 'crm-pace:', secret } = options ?? {};
  const rememberMs = rememberMsOf(options?.rememberMs, 'redisStore()');
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new TypeError('redisStore(): prefix must be 1 to 100 letters, digits or :_.- characters');
  }
  if (secret !== undefined && (typeof secret !== 'string' || secret.length === 0)) {
    throw new TypeError('redisStore(): secret must be a non-empty string');
  }
  const hashes = new Map<string, string>();
  /** The key's three Redis keys, one hash tag (one cluster slot), named by a keyed hash of it. */
  const keysOf = (key: string): [string, string, string] => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = createHmac('sha256', secret ?? `crm-integration-sdk pace ${prefix}`)
        .update(key)
        .digest('hex');
      if (hashes.size >= 1000) hashes.clear();
      hashes.set(key, hash);
    }
    return [`${prefix}{${hash}}:state`, `${prefix}{${hash}}:turns`, `${prefix}{${hash}}:learned`];
  };
  const run = async (key: string, step: string, ...args: (string | number)[]): Promise<unknown> => {
    // Closed for good, or between connections: an answer now would only queue up.
    if (client.status === 'end' || client.status === 'reconnecting' || client.status === 'close') {
      throw new Error(`Redis is not connected (${client.status})`);
    }
    const keys = keysOf(key);
    try {
      return await client.evalsha(SHA, 3, ...keys, step, KEEP_MS, rememberMs, ...args);
    } catch (error) {
      // Not loaded yet (or flushed, or another server after a failover): loaded, and run again.
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      await client.script('LOAD', PACE_SCRIPT);
      return await client.evalsha(SHA, 3, ...keys, step, KEEP_MS, rememberMs, ...args);
    }
  };
  return sharedPaceStore({
    async reserve(key, count, intervalMs, lateMs) {
      return leaseOf(await run(key, 'reserve', count, intervalMs, lateMs ?? ''));
    },
    async refuse(key, phase, turn, pauseMs) {
      return reservationsOf(await run(key, 'refuse', phase, turn, pauseMs));
    },
    async learn(key, phase, learned) {
      // Remembered past the schedule in the form a next job starts from (rememberedForm()).
      const rate = learned?.rate;
      const kept = rate === undefined ? '' : JSON.stringify(rememberedForm({ ...learned, rate }));
      await run(key, 'learn', phase, JSON.stringify(learned), kept);
    },
  });
}

/** A number Redis sent as text, or a failure of the store: a wrong answer must not pace anything. */
function numberOf(value: unknown, whole = false): number {
  const number = typeof value === 'string' && value !== '' ? Number(value) : Number.NaN;
  if (!Number.isFinite(number) || number < 0 || (whole && !Number.isSafeInteger(number))) {
    throw new TypeError('Redis answered the pace script with something else than its numbers');
  }
  return number;
}

/** The lease in the script's answer: [phase, turn, delayMs, now, startedAt, learned, learnedAt, refusals]. */
function leaseOf(reply: unknown): PaceLease {
  if (!Array.isArray(reply) || reply.length !== 8) throw new TypeError('Redis answered the pace script with no lease');
  const [phase, turn, delayMs, now, startedAt, learned, learnedAt, refusals] = reply as unknown[];
  return {
    phase: numberOf(phase, true),
    turn: numberOf(turn, true),
    // Longer than any timer: a wrong answer, refused rather than cut to a wait of 24.8 days (the
    // pacer refuses one longer than its maxRetryAfter too).
    delayMs: checked(numberOf(delayMs), 2_147_483_647),
    now: numberOf(now),
    startedAt: numberOf(startedAt),
    learned:
      learned === ''
        ? undefined
        : {
            ...learnedOf(learned, numberOf(learnedAt)),
            refusals: refusals === '' ? undefined : numberOf(refusals, true),
          },
  };
}

/** `value`, unless it is over `most`: then Redis's answer is a wrong one. */
function checked(value: number, most: number): number {
  if (value > most) throw new TypeError('Redis answered the pace script with a wait longer than any timer');
  return value;
}

/**
 * What was learned, as `learn()` wrote it (JSON): each field absent, or a number a server's answers
 * could set (a rate of 1e-9/s stalls a key). Anything else in the hash (a foreign value) is a
 * wrong answer of the store, refused.
 */
function learnedOf(text: unknown, at: number): PaceLearned & { at: number } {
  const base = (value: unknown) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || !FINGERPRINT.test(value)) {
      throw new TypeError('Redis answered the pace script with a learned base no SDK wrote');
    }
    return value;
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(text));
  } catch {}
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TypeError('Redis answered the pace script with something else than what was learned');
  }
  const field = (name: keyof PaceLearned, { least, most }: { least: number; most: number }) => {
    const value = (parsed as Record<string, unknown>)[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < least || value > most) {
      throw new TypeError(`Redis answered the pace script with a learned ${name} no server's answers could set`);
    }
    return value;
  };
  return {
    rate: field('rate', RATES),
    ceiling: field('ceiling', RATES),
    ramp: field('ramp', RATES),
    quietMs: field('quietMs', QUIET_TIMES),
    base: base((parsed as Record<string, unknown>).base),
    at,
  };
}

/**
 * The ended phase's reservations, `turn,count,at,intervalMs,lateMs` each (lateMs empty when not
 * said, absent from a script of an older version), or undefined when the refusal ended nothing.
 */
function reservationsOf(reply: unknown): readonly PaceReservation[] | undefined {
  if (reply === null || reply === undefined) return undefined;
  if (!Array.isArray(reply)) throw new TypeError('Redis answered the pace script with no reservations');
  return reply.map((entry: unknown) => {
    const [turn, count, at, intervalMs, lateMs] = String(entry).split(',');
    const reservation = {
      turn: numberOf(turn, true),
      count: numberOf(count, true),
      at: numberOf(at),
      intervalMs: numberOf(intervalMs),
    };
    return lateMs === undefined || lateMs === '' ? reservation : { ...reservation, lateMs: numberOf(lateMs) };
  });
}
