import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { CrmClient, CrmConnectionError, type CrmLogger } from '../../src/index';
import { rejection, TENANT } from '../support/capture';

/*
 * A custom fetch that rejects with crafted errors: the connection error's message names what
 * failed (reasonOf), and never a credential, whatever the fields of the cause chain hold; its log
 * lines cannot be forged; unreadable failures still give a CrmConnectionError and a log line.
 */

const KEY = 'key_live_c0nnect5ecret';
const WIDGETS = 'integrations/v1/widgets';

function failingWith(failure: () => unknown, options: ConstructorParameters<typeof CrmClient>[0] = {}) {
  const lines: string[] = [];
  const logger: CrmLogger = (line) => {
    lines.push(line);
  };
  const crm = new CrmClient({
    baseUrl: 'https://crm.test',
    apiKey: KEY,
    tenantId: TENANT,
    maxRetries: 0,
    logger,
    fetch: async () => {
      throw failure();
    },
    ...options,
  });
  return { crm, lines };
}

const networkError = (fields: Record<string, unknown>, message = 'connect failed') =>
  new TypeError('fetch failed', { cause: Object.assign(new Error(message), fields) });

function expectNothingOf(secret: string, error: unknown, lines: readonly string[]): void {
  for (const text of [
    (error as Error).message,
    JSON.stringify(error),
    inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    ...lines,
  ]) {
    expect(text).not.toContain(secret);
  }
}

describe('a key spread over the fields reasonOf() joins', () => {
  // A key with a ':' or a ' ' in it is a legal Credential; reasonOf joins address and port with
  // ':', and code and message with ' ', after each field was masked on its own.
  test("address + ':' + port rebuilds a key with a colon", async () => {
    const key = 'acct_42:s3cretpart';
    const { crm, lines } = failingWith(
      () => networkError({ code: 'ECONNREFUSED', address: 'acct_42', port: 's3cretpart' }, 'connect ECONNREFUSED'),
      { apiKey: key },
    );
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmConnectionError);
    expectNothingOf(key, error, lines);
  });

  test("code + ' ' + message rebuilds a key with a space", async () => {
    const key = 'acct_42 s3cretpart';
    const { crm, lines } = failingWith(() => networkError({ code: 'acct_42' }, 's3cretpart'), { apiKey: key });
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expectNothingOf(key, error, lines);
  });
});

describe('an unreadable failure still gives a CrmConnectionError and a log line', () => {
  test.each([
    ['an object with no prototype', () => Object.create(null)],
    [
      'an Error whose message getter throws',
      () =>
        Object.defineProperty(new Error('x'), 'message', {
          get() {
            throw new Error('message getter');
          },
        }),
    ],
    ['a Symbol', () => Symbol('boom')],
  ])('%s', async (_name, failure) => {
    const { crm, lines } = failingWith(failure);
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(lines).toHaveLength(1);
  });
});

describe('connection messages from crafted causes', () => {
  test.each([
    ['the key as hostname', { code: 'ENOTFOUND', hostname: KEY }],
    ['the key as code', { code: `E_${KEY}` }],
    ['the key as address, port a number', { code: 'ECONNREFUSED', address: KEY, port: 443 }],
    ['the key percent-encoded in hostname', { code: 'ENOTFOUND', hostname: encodeURIComponent(KEY) }],
    ['the key in base64 as hostname', { code: 'ENOTFOUND', hostname: btoa(KEY) }],
    ['the key in upper case', { code: 'ENOTFOUND', hostname: KEY.toUpperCase() }],
  ])('%s: masked in message, JSON, inspect and log', async (_name, fields) => {
    const { crm, lines } = failingWith(() => networkError(fields, `failed for ${KEY}`));
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error.message).toMatch(/^Connection failed: GET \/integrations\/v1\/widgets: /);
    for (const secret of [KEY, encodeURIComponent(KEY), btoa(KEY).replace(/=+$/, ''), KEY.toUpperCase()]) {
      expectNothingOf(secret, error, lines);
    }
  });

  test('a cause chain with a cycle ends, and names the code', async () => {
    const { crm } = failingWith(() => {
      const inner = Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' });
      const outer = new TypeError('fetch failed', { cause: inner });
      (inner as { cause?: unknown }).cause = outer;
      return outer;
    });
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error.message).toContain('ECONNRESET');
  });

  test('an AggregateError whose first error holds the key: masked', async () => {
    const { crm, lines } = failingWith(
      () =>
        new TypeError('fetch failed', {
          cause: Object.assign(new AggregateError([new Error(`connect ECONNREFUSED ${KEY}`)], ''), {
            code: 'ECONNREFUSED',
          }),
        }),
    );
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error.message).toContain('ECONNREFUSED');
    expectNothingOf(KEY, error, lines);
  });

  test('control characters in code, message and hostname cannot forge log lines or message lines', async () => {
    const { crm, lines } = failingWith(() =>
      networkError({ code: 'E\nCRM GET /x 200', hostname: 'h\r\nx\u2028y\u0085z' }, 'a\nb'),
    );
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error.message).not.toMatch(/[\n\r\u2028\u0085]/);
    for (const line of lines) expect(line).not.toMatch(/[\n\r\u2028\u0085]/);
  });

  test('a huge message is bounded', async () => {
    const { crm } = failingWith(() => networkError({ code: 'EHUGE' }, 'x'.repeat(5_000_000)));
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error.message.length).toBeLessThan(700);
  });

  test('a non-Error rejection holding the key: masked, CrmConnectionError', async () => {
    for (const failure of [`boom ${KEY}`, { code: 'ECONNREFUSED', hostname: KEY }, [KEY], 42, null]) {
      const { crm, lines } = failingWith(() => failure);
      const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
      expect(error).toBeInstanceOf(CrmConnectionError);
      expectNothingOf(KEY, error, lines);
    }
  });

  test('a cause whose getters throw, or a Proxy error: CrmConnectionError', async () => {
    for (const failure of [
      new Proxy(new Error('x'), {
        get: () => {
          throw new Error('trap');
        },
      }),
      Object.defineProperty(new TypeError('fetch failed'), 'cause', {
        get() {
          throw new Error('cause getter');
        },
      }),
    ]) {
      const { crm } = failingWith(() => failure, { logger: undefined });
      const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
      expect(error).toBeInstanceOf(CrmConnectionError);
    }
  });
});
