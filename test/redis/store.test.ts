import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { memoryStore, type PaceStore, redisStore } from '../../src/redis/index';
import { startRedis, type TestRedis } from '../support/redis';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.close();
});

const API_KEY = 'sk_live_4f9a1c2e7b3d5a6f8e0c1b2a3d4e5f6a';

/** The same steps, whatever the store: memory-store.ts is the reference the Lua script follows. */
describe.each([
  ['memoryStore()', () => memoryStore()],
  ['redisStore()', () => redisStore(redis.client(), { prefix: `contract-${Math.random().toString(36).slice(2)}:` })],
] as const)('%s', (_, make: () => PaceStore) => {
  test('reserves turns numbered on from 0 in phase 0, each reservation after the last', async () => {
    const store = make();
    // Turns a second apart: the second reservation comes long before the first's are over, however
    // busy the machine (10 ms apart, a second asked more than 80 ms later was caught up to now).
    const first = await store.reserve(API_KEY, 3, 1000);
    const second = await store.reserve(API_KEY, 2, 1000);

    expect(first).toMatchObject({ phase: 0, turn: 0, learned: undefined });
    expect(second).toMatchObject({ phase: 0, turn: 3 });
    // The second starts when the first's 3 turns, 1 s apart, are over: 3 s after the first.
    expect(second.now + second.delayMs).toBeCloseTo(first.now + first.delayMs + 3000, 0);
    expect(second.startedAt).toBe(first.startedAt);
  });

  test('a refusal ends the phase once: the pause delays the next turn, turns start again at 0', async () => {
    const store = make();
    await store.reserve(API_KEY, 4, 5);
    const ended = await store.refuse(API_KEY, 0, 2, 1000);
    const again = await store.refuse(API_KEY, 0, 3, 1000);
    const next = await store.reserve(API_KEY, 1, 5);

    expect(ended).toHaveLength(1);
    expect(ended?.[0]).toMatchObject({ turn: 0, count: 4, intervalMs: 5 });
    // Another refusal of the phase already ended changes nothing.
    expect(again).toBeUndefined();
    expect(next).toMatchObject({ phase: 1, turn: 0 });
    expect(next.delayMs).toBeGreaterThan(900);
  });

  test('a reservation keeps how late its process said its requests went; one that said nothing has none', async () => {
    const store = make();
    await store.reserve(API_KEY, 2, 5, 37.5);
    await store.reserve(API_KEY, 1, 5);
    const ended = await store.refuse(API_KEY, 0, 2, 1000);

    expect(ended?.[0]).toMatchObject({ turn: 0, count: 2, lateMs: 37.5 });
    expect(ended?.[1]).toMatchObject({ turn: 2, count: 1 });
    expect(ended?.[1]?.lateMs).toBeUndefined();
  });

  test('a lateness that is not a number of 0 or more is not kept: the reservation is kept without it', async () => {
    const store = make();
    for (const lateMs of [Number.NaN, -1, Number.POSITIVE_INFINITY, 1e9]) await store.reserve(API_KEY, 1, 5, lateMs);
    const ended = await store.refuse(API_KEY, 0, 0, 1000);

    expect(ended).toHaveLength(4);
    for (const reservation of ended ?? []) expect(reservation.lateMs).toBeUndefined();
  });

  test('what was learned is kept for the phase after the refusal, and stays through later refusals', async () => {
    const store = make();
    await store.reserve(API_KEY, 1, 5);
    await store.refuse(API_KEY, 0, 0, 0);
    await store.learn(API_KEY, 0, { rate: 1 }); // the phase it speaks for is over: ignored
    await store.learn(API_KEY, 1, { rate: 180, ceiling: 220, quietMs: 3000 });
    const lease = await store.reserve(API_KEY, 1, 5);
    await store.refuse(API_KEY, 1, 0, 0);
    const later = await store.reserve(API_KEY, 1, 5);

    expect(lease.learned).toMatchObject({ rate: 180, ceiling: 220, quietMs: 3000 });
    expect(lease.learned?.at).toBeGreaterThan(0);
    expect(later).toMatchObject({ phase: 2, learned: { rate: 180, ceiling: 220 } });
  });

  test('keys are paced apart', async () => {
    const store = make();
    await store.reserve(API_KEY, 5, 100);
    const other = await store.reserve('another-key', 1, 100);

    expect(other).toMatchObject({ phase: 0, turn: 0, delayMs: 0 });
  });
});

describe('redisStore() in Redis', () => {
  test('keeps neither the API key nor any part of it: its keys and values hold a keyed hash of it', async () => {
    const client = redis.client();
    const prefix = `secrets-${Math.random().toString(36).slice(2)}:`;
    const store = redisStore(client, { prefix });
    await store.reserve(API_KEY, 2, 5);
    await store.learn(API_KEY, 0, { rate: 10 });
    await store.refuse(API_KEY, 0, 1, 10);

    const keys = await client.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    const dump: string[] = [...keys];
    for (const key of keys) {
      if ((await client.type(key)) === 'hash') dump.push(...Object.entries(await client.hgetall(key)).flat());
      else dump.push(...(await client.lrange(key, 0, -1)));
    }
    const text = dump.join('\n');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(API_KEY.slice(0, 12));
    expect(keys.every((key) => /^secrets-\w+:\{[0-9a-f]{64}\}:(state|turns|learned)$/.test(key))).toBe(true);
  });

  test('remembers a rate learned past the schedule: once the schedule expired, the next lease starts a new pace from it', async () => {
    const client = redis.client();
    const prefix = `remember-${Math.random().toString(36).slice(2)}:`;
    const store = redisStore(client, { prefix });
    await store.reserve(API_KEY, 2, 5);
    await store.refuse(API_KEY, 0, 1, 10);
    await store.learn(API_KEY, 1, { rate: 200, ceiling: 200, quietMs: 30_000, base: 'ab12' });
    // The schedule's keys expire 15 minutes unused: gone, as a night later.
    for (const key of await client.keys(`${prefix}*`)) if (!key.endsWith(':learned')) await client.del(key);
    const ttl = await client.pttl((await client.keys(`${prefix}*`))[0] as string);

    const lease = await store.reserve(API_KEY, 1, 0);

    expect(lease).toMatchObject({ phase: 0, turn: 0, learned: { rate: 200, ceiling: 200, base: 'ab12', refusals: 1 } });
    // Kept 7 days from its last use.
    expect(ttl).toBeGreaterThan(6 * 24 * 3_600_000);
    // A refusal of the new night counts on from the one it took.
    await store.refuse(API_KEY, 0, 0, 10);
    await store.learn(API_KEY, 1, { rate: 100 });
    expect((await store.reserve(API_KEY, 1, 0)).learned).toMatchObject({ rate: 100, refusals: 2 });
  });

  test('with rememberMs: 0, or for a phase that found no rate, nothing is kept past the schedule', async () => {
    const client = redis.client();
    const prefix = `forget-${Math.random().toString(36).slice(2)}:`;
    await redisStore(client, { prefix, rememberMs: 0 }).reserve(API_KEY, 1, 5);
    await redisStore(client, { prefix, rememberMs: 0 }).learn(API_KEY, 0, { rate: 10 });
    await redisStore(client, { prefix }).reserve('another-key', 1, 5);
    await redisStore(client, { prefix }).learn('another-key', 0, { ramp: 12 });

    expect((await client.keys(`${prefix}*`)).filter((key) => key.endsWith(':learned'))).toEqual([]);
    expect(() => redisStore(client, { rememberMs: -1 })).toThrow(/rememberMs must be a whole number/);
    expect(() => redisStore(client, { rememberMs: '7d' as never })).toThrow(/rememberMs must be a whole number/);
  });

  test('every key it writes expires', async () => {
    const client = redis.client();
    const prefix = `ttl-${Math.random().toString(36).slice(2)}:`;
    const store = redisStore(client, { prefix });
    await store.reserve(API_KEY, 2, 5);
    await store.refuse(API_KEY, 0, 1, 60_000);
    await store.reserve(API_KEY, 1, 5);
    await store.learn(API_KEY, 1, { rate: 10 });

    // The schedule's two keys, and the rate remembered past it (rememberMs).
    const keys = await client.keys(`${prefix}*`);
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0);
  });

  test('the same key under two prefixes, or two secrets, is kept apart', async () => {
    const client = redis.client();
    const tag = Math.random().toString(36).slice(2);
    await redisStore(client, { prefix: `a-${tag}:` }).reserve(API_KEY, 5, 100);
    const b = await redisStore(client, { prefix: `b-${tag}:` }).reserve(API_KEY, 1, 100);
    await redisStore(client, { prefix: `c-${tag}:`, secret: 'one' }).reserve(API_KEY, 5, 100);
    const d = await redisStore(client, { prefix: `c-${tag}:`, secret: 'two' }).reserve(API_KEY, 1, 100);

    expect(b.turn).toBe(0);
    expect(d.turn).toBe(0);
  });

  test('a bad prefix, secret or client is refused with a clear error', () => {
    const client = redis.client({ lazyConnect: true });
    for (const prefix of ['', 'has space', 'a'.repeat(101), 'tab\t', '{tag}', 7 as unknown as string]) {
      expect(() => redisStore(client, { prefix })).toThrow(
        /prefix must be 1 to 100 letters, digits or :_\.- characters/,
      );
    }
    expect(() => redisStore(client, { secret: '' })).toThrow(/secret must be a non-empty string/);
    expect(() => redisStore({} as never)).toThrow(/client must be an ioredis \(or iovalkey\) client/);
    expect(() => redisStore(undefined as never)).toThrow(/client must be an ioredis/);
  });

  test('inspecting a store shows neither its secret nor a key it has paced', async () => {
    const store = redisStore(redis.client(), { secret: 'hmac-secret-value-123' });
    await store.reserve(API_KEY, 1, 5);

    const shown = inspect(store, { depth: 10, showHidden: true });
    expect(shown).not.toContain('hmac-secret-value-123');
    expect(shown).not.toContain(API_KEY);
  });

  test('a reply of the wrong shape is a failure of the store, never a lease', async () => {
    const hostile = (reply: unknown) =>
      redisStore({ evalsha: async () => reply, script: async () => 'OK', status: 'ready' });
    for (const reply of [
      null,
      'OK',
      [],
      ['0', '0', '-5', '1', '1', '', '', ''],
      ['x', '0', '0', '1', '1', '', '', ''],
      ['0.5', '0', '0', '1', '1', '', '', ''],
      ['0', '0', 'NaN', '1', '1', '', '', ''],
      ['0', '0', '0', '1', '1', '{"rate":5}', '1', '-1'],
      ['0', '0', '0', '1', '1', '{"rate":5}', '1', '0.5'],
      ['0', '0', '0', '1', '1', '', ''],
      [{}, [], 1, 2, 3, 4, 5, 6],
    ]) {
      await expect(hostile(reply).reserve(API_KEY, 1, 5)).rejects.toThrow(TypeError);
    }
    await expect(hostile(['1,2,x,4']).refuse(API_KEY, 0, 0, 1)).rejects.toThrow(TypeError);
    await expect(hostile({ length: 3 }).refuse(API_KEY, 0, 0, 1)).rejects.toThrow(TypeError);
    await expect(hostile(['1,2,3,4,-5']).refuse(API_KEY, 0, 0, 1)).rejects.toThrow(TypeError);
    await expect(hostile(['1,2,3,4,soon']).refuse(API_KEY, 0, 0, 1)).rejects.toThrow(TypeError);
    // Nothing said, or a script of an older version (four fields): a reservation without lateMs.
    await expect(hostile(['1,2,3,4,', '3,1,5,4']).refuse(API_KEY, 0, 0, 1)).resolves.toEqual([
      { turn: 1, count: 2, at: 3, intervalMs: 4 },
      { turn: 3, count: 1, at: 5, intervalMs: 4 },
    ]);
    // What was learned: a field that no server's answers could set (a foreign value in the hash,
    // a rate that would stall the key) makes the answer a wrong one, refused, never a pace.
    const learned = (text: string) => hostile(['0', '0', '0', '1', '1', text, '5', '']).reserve(API_KEY, 1, 5);
    for (const text of [
      '{"rate":"fast"}',
      '{"ceiling":-1}',
      '{"rate":1e-9}',
      '{"rate":2e6}',
      '{"quietMs":-5}',
      '{"quietMs":0.001}',
      'not json',
      '[1,2]',
      '{"rate":5,"base":"not-hex!"}',
      '{"rate":5,"base":7}',
    ]) {
      await expect(learned(text)).rejects.toThrow(TypeError);
    }
    await expect(learned('{"ramp":7,"rate":null}')).resolves.toMatchObject({
      learned: { rate: undefined, ceiling: undefined, ramp: 7, quietMs: undefined, at: 5 },
    });
    // A wait longer than any timer is refused, not cut to 24.8 days.
    await expect(hostile(['0', '0', '3000000000', '1', '1', '', '', '']).reserve(API_KEY, 1, 5)).rejects.toThrow(
      TypeError,
    );
  });

  test('a key of another type in its place is a failure of the store (WRONGTYPE), not a crash', async () => {
    const client = redis.client();
    const prefix = `wrongtype-${Math.random().toString(36).slice(2)}:`;
    const store = redisStore(client, { prefix });
    await store.reserve(API_KEY, 1, 5);
    const [state] = (await client.keys(`${prefix}*:state`)) as [string];
    await client.del(state);
    await client.set(state, 'not a hash');

    await expect(store.reserve(API_KEY, 1, 5)).rejects.toThrow(/WRONGTYPE/);
  });

  test('loads its script again when Redis forgot it (SCRIPT FLUSH)', async () => {
    const client = redis.client();
    const store = redisStore(client, { prefix: `flush-${Math.random().toString(36).slice(2)}:` });
    await store.reserve(API_KEY, 1, 5);
    await client.script('FLUSH');

    await expect(store.reserve(API_KEY, 1, 5)).resolves.toMatchObject({ turn: 1 });
  });
});
