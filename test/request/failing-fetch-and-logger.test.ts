import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CrmConnectionError, CrmError } from '../../src/index';
import { API_KEY, makeClient } from '../support/capture';
import { expectAbsent } from '../support/renderings';

const settle = async (p: PromiseLike<unknown>) => {
  try {
    await p;
    return { ok: true as const, error: undefined };
  } catch (error) {
    return { ok: false as const, error };
  }
};

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const allTrapsThrow = () =>
  new Proxy(
    {},
    new Proxy(
      {},
      {
        get: () => () => {
          throw new Error(`trap ${API_KEY}`);
        },
      },
    ),
  );
const nullProtoCycle = () => {
  const o = Object.create(null);
  o.self = o;
  o.key = API_KEY;
  return o;
};
const throwingGetters = () => {
  const e = new Error('boom');
  Object.defineProperty(e, 'message', {
    get() {
      throw new Error(API_KEY);
    },
    enumerable: true,
  });
  return e;
};
const throwingCause = () => {
  const e = new Error('boom');
  Object.defineProperty(e, 'cause', {
    get() {
      throw new Error('no');
    },
  });
  return e;
};
const enumerableGetter = () => {
  const e = new Error('boom');
  Object.defineProperty(e, 'code', {
    get() {
      throw new Error('no');
    },
    enumerable: true,
  });
  return e;
};
const aggregateBadErrors = () => {
  const e = new AggregateError([], 'x');
  Object.defineProperty(e, 'errors', { value: 'not an array' });
  return e;
};
const crossRealm = (headers: unknown) =>
  runInNewContext('(h) => Object.assign(new Error("socket hang up"), { config: { headers: h } })')(headers);
const toStringNull = () => ({ toString: null, key: API_KEY });

const cases: Array<[string, (h: unknown) => unknown]> = [
  ['a revoked Proxy', revoked],
  ['a Proxy whose every trap throws', allTrapsThrow],
  ['a cyclic null-prototype object', nullProtoCycle],
  ['an error whose message getter throws', throwingGetters],
  ['an error whose cause getter throws', throwingCause],
  ['an error with an enumerable getter that throws', enumerableGetter],
  ['an AggregateError whose errors is not an array', aggregateBadErrors],
  ['a cross-realm error with config.headers', crossRealm],
  ['an object with toString: null', toStringNull],
  ['a Symbol', () => Symbol(API_KEY)],
  ['a BigInt', () => 10n],
];

describe('custom fetch rejections', () => {
  for (const withLogger of [false, true]) {
    for (const [name, make] of cases) {
      test(`a custom fetch rejecting with ${name}${withLogger ? ' (with a logger)' : ''} gives CrmConnectionError, without the key`, async () => {
        const fetch = (async (_i: unknown, init?: RequestInit) => {
          throw make(init?.headers);
        }) as typeof globalThis.fetch;
        const crm = makeClient({ fetch, maxRetries: 0, ...(withLogger ? { logger: () => {} } : {}) });
        const { error } = await settle(crm.opportunities.get('opp_1'));
        expect(error, String((error as Error)?.stack).slice(0, 300)).toBeInstanceOf(CrmConnectionError);
        expectAbsent(error, API_KEY);
      });
    }
  }
});

describe('loggers', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (r: unknown) => unhandled.push(r);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  const ok200 = (async () =>
    new Response(JSON.stringify({ success: true, data: { id: 'opp_1' } }), {
      headers: { 'content-type': 'application/json' },
    })) as typeof globalThis.fetch;
  const loggers: Array<[string, () => unknown]> = [
    [
      'throws',
      () => {
        throw new Error('x');
      },
    ],
    [
      'throws a non-error',
      () => {
        throw Symbol('x');
      },
    ],
    ['returns a rejected promise', () => Promise.reject(new Error('x'))],
    [
      'is async and throws',
      async () => {
        throw new Error('x');
      },
    ],
    [
      'returns a thenable whose then throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable whose then throws is the point
        then() {
          throw new Error('x');
        },
      }),
    ],
    [
      'returns an object whose then getter throws',
      () =>
        Object.defineProperty({}, 'then', {
          get() {
            throw new Error('x');
          },
        }),
    ],
    ['returns a never-settling promise', () => new Promise(() => {})],
    ['returns a revoked proxy', revoked],
    [
      'returns a thenable that rejects synchronously',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable that rejects is the point
        then(_: unknown, rej: (e: unknown) => void) {
          rej(new Error('x'));
        },
      }),
    ],
  ];
  for (const [name, logger] of loggers) {
    test(`L a logger that ${name} is ignored`, async () => {
      const crm = makeClient({ fetch: ok200, logger: logger as never });
      const result = await settle(crm.opportunities.get('opp_1'));
      await new Promise((r) => setTimeout(r, 30));
      expect(result.ok, String(result.error)).toBe(true);
      expect(unhandled).toEqual([]);
    });
  }
});

test('L2 log entry fields keep raw control characters (line is escaped, entry.error/url are not)', async () => {
  const entries: Array<{ error?: string | undefined }> = [];
  const lines: string[] = [];
  const fetch = (async () => {
    throw new Error('reset\ncrm GET /forged 200 1ms');
  }) as typeof globalThis.fetch;
  const crm = makeClient({
    fetch,
    maxRetries: 0,
    logger: (l, e) => {
      lines.push(l);
      entries.push(e);
    },
  });
  await settle(crm.opportunities.get('opp_1'));
  expect(lines.every((l) => !l.includes('\n'))).toBe(true);
  // Informational: entry.error holds the raw newline.
  expect(entries[0]?.error?.includes('\n')).toBe(true);
});

test('F2 a CrmError and nothing else even when fetch rejects with an already-CrmError-branded object', async () => {
  const fake = Object.assign(new Error(`leak ${API_KEY}`), {
    [Symbol.for('crm-integration-sdk.error-kinds')]: ['CrmError'],
  });
  const fetch = (async () => {
    throw fake;
  }) as typeof globalThis.fetch;
  const crm = makeClient({ fetch, maxRetries: 0 });
  const { error } = await settle(crm.opportunities.get('opp_1'));
  expect(error).toBeInstanceOf(CrmError);
  expectAbsent(error, API_KEY);
});
