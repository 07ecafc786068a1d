import { describe, expect, test } from 'vitest';
import { CrmClient, type CrmLogger, CrmNotFoundError, CrmValidationError } from '../../src/index';
import { API_KEY, rejection, TENANT } from '../support/capture';

/*
 * crm.request() must never send outside baseUrl's origin and path, whatever the path. Each path
 * is either refused with CrmValidationError (nothing sent) or sent under baseUrl, as the URL
 * parser of fetch and the server (decoding percent-escapes once) read it.
 */

const HOSTILE = [
  '..',
  '../api-key',
  'a/..',
  'integrations/v1/../../api-key',
  '%2e%2e/x',
  '.%2E/x',
  '%2E./x',
  'a/%2e',
  'a/.',
  './a',
  '.',
  'integrations/..;/api-key',
  'a\\..\\x',
  'a/%5c..%5cx',
  '%2f%2fevil.example',
  '//evil.example',
  '///evil.example',
  '/\\evil.example',
  '/ /evil.example',
  'https://evil.example',
  'HTTPS://evil.example',
  'http:evil.example',
  'http:/evil.example',
  'evil.example:443/x',
  '@evil.example',
  'user:pass@evil.example/x',
  ':@evil.example',
  'javascript:alert(1)',
  'a\tb',
  '.\t./x',
  'a\nb',
  'a\rb',
  '\u0000',
  'a b',
  '\u00a0..',
  'a/\u2028/b',
  '\uFF0E\uFF0E/x',
  '%EF%BC%8E%EF%BC%8E/x',
  '\u2024\u2024/x',
  'a/%252e%252e/x',
  'a?b',
  'a#b',
  '%3F',
  '%23tenantId=x',
  'a/%00/b',
  '\u202eevil',
  '\uD800',
  'a/\uDC00',
];

const BASES = ['https://crm.test', 'https://crm.test/api/v2/', 'https://crm.test/api/v2'];

/** A client whose fetch records every URL it is asked for. */
function recording(baseUrl: string) {
  const sent: string[] = [];
  const crm = new CrmClient({
    baseUrl,
    apiKey: API_KEY,
    tenantId: TENANT,
    maxRetries: 0,
    fetch: async (input, init) => {
      sent.push(new Request(input, init).url);
      return Response.json({ success: true, data: {} });
    },
  });
  return { crm, sent };
}

describe.each(BASES)('crm.request() under baseUrl %s', (baseUrl) => {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/?$/, '/');

  test.each(HOSTILE.map((path) => [JSON.stringify(path), path]))(
    'path %s stays under baseUrl or is refused',
    async (_shown, path) => {
      for (const method of ['GET', 'POST'] as const) {
        const { crm, sent } = recording(baseUrl);
        let error: unknown;
        try {
          await crm.request({ method, path });
        } catch (caught) {
          error = caught;
        }
        if (error !== undefined) {
          expect(error).toBeInstanceOf(CrmValidationError);
          expect(sent).toEqual([]);
          continue;
        }
        expect(sent).toHaveLength(1);
        const url = new URL(sent[0] as string);
        expect(url.origin).toBe(base.origin);
        expect(url.pathname.startsWith(basePath)).toBe(true);
        // As a server reads it, decoded once: still under the base path, no dot segment.
        const decoded = decodeURIComponent(url.pathname);
        expect(decoded.split(/[/\\]/)).not.toContain('..');
        expect(decoded.startsWith(basePath)).toBe(true);
        expect(url.username + url.password).toBe('');
      }
    },
  );

  test('a very long path is sent under baseUrl (or refused), and errors stay bounded', async () => {
    const { crm, sent } = recording(baseUrl);
    const path = `integrations/v1/${'w'.repeat(100_000)}`;
    await crm.request({ method: 'GET', path }).catch((error: unknown) => {
      expect(error).toBeInstanceOf(CrmValidationError);
    });
    for (const each of sent) expect(new URL(each).origin).toBe(base.origin);
  });
});

describe('ordinary paths are sent as written', () => {
  test.each([
    ['integrations/v1/widgets', '/integrations/v1/widgets'],
    ['/integrations/v1/widgets', '/integrations/v1/widgets'],
    ['integrations/v1/widgets/w%2F1', '/integrations/v1/widgets/w%2F1'],
    ['integrations/v1/widgets/a.b', '/integrations/v1/widgets/a.b'],
    ['integrations/v1/widgets/', '/integrations/v1/widgets/'],
    ['integrations/v1/widgets/%C3%A9', '/integrations/v1/widgets/%C3%A9'],
    ['integrations/v1/widgets/é', '/integrations/v1/widgets/%C3%A9'],
    ['integrations/v1/widgets@x', '/integrations/v1/widgets@x'],
  ])('%s is sent to %s', async (path, expected) => {
    const { crm, sent } = recording('https://crm.test');
    await crm.request({ method: 'GET', path });
    expect(sent.map((each) => new URL(each).pathname)).toEqual([expected]);
  });
});

describe('crm.request() to a path the SDK also describes', () => {
  /*
   * crm.request() to a path the SDK also describes: its data is "unchecked" (client.ts), so the
   * described endpoint's validators must not apply, let alone fail.
   */

  const client = (data: unknown, options: ConstructorParameters<typeof CrmClient>[0] = {}) =>
    new CrmClient({
      baseUrl: 'https://crm.test',
      apiKey: API_KEY,
      tenantId: TENANT,
      maxRetries: 0,
      fetch: async () => Response.json({ success: true, data }),
      ...options,
    });

  describe('crm.request() to a described list path', () => {
    test.each(['integrations/v1/contacts', 'integrations/v1/activities', '/integrations/v1/contacts'])(
      'GET %s with records the SDK’s schema refuses resolves to the data as sent',
      async (path) => {
        const data = [{ id: 5, note: 'a record of a newer server' }];
        const crm = client(data);
        // Twice: before and after the generated validators have loaded.
        for (let i = 0; i < 2; i++) {
          expect(await crm.request({ method: 'GET', path })).toEqual(data);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
    );
  });

  describe('a described path whose data is not checked', () => {
    test('GET of a described record path with data of another shape resolves to it', async () => {
      const crm = client({ anything: true });
      expect(await crm.request({ method: 'GET', path: 'integrations/v1/opportunities/opp_1' })).toEqual({
        anything: true,
      });
      expect(await crm.request({ method: 'POST', path: 'integrations/v1/contacts', body: {} })).toEqual({
        anything: true,
      });
    });

    test('validateResponses: false, a described list path: the data as sent', async () => {
      const data = [{ id: 5 }];
      expect(
        await client(data, { validateResponses: false }).request({ method: 'GET', path: 'integrations/v1/contacts' }),
      ).toEqual(data);
    });
  });

  describe('a key the caller put in the path', () => {
    test('is masked in the error message as it is in the log line', async () => {
      const lines: string[] = [];
      const logger: CrmLogger = (line) => {
        lines.push(line);
      };
      const crm = client(undefined, {
        logger,
        fetch: async () => Response.json({ success: false }, { status: 404 }),
      });
      const error = await rejection(crm.request({ method: 'GET', path: `integrations/v1/keys/${API_KEY}` }));
      expect(error).toBeInstanceOf(CrmNotFoundError);
      expect(lines.join('\n')).not.toContain(API_KEY);
      expect(error.message).not.toContain(API_KEY);
    });
  });
});
