import { describe, expect, test } from 'vitest';
import {
  CrmError,
  CrmNotFoundError,
  type CrmRequestLog,
  CrmResponseValidationError,
  CrmValidationError,
} from '../../src/index';
import {
  ADMIN_TOKEN,
  API_KEY,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  reply,
  useFaultServer,
} from '../support/fault-server';
import { expectAbsent } from '../support/renderings';

const fault = useFaultServer();
const uEscaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('apiKey function errors are not masked', () => {
  test('A1 an apiKey function error that carries the admin token becomes a masked copy in cause', async () => {
    const err = Object.assign(new Error(`vault refused; admin=${ADMIN_TOKEN}`), {
      config: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    });
    const crm = clientFor(fault(), {
      apiKey: () => {
        throw err;
      },
    });
    const { error } = await failure(crm.opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmError);
    expectAbsent(error, ADMIN_TOKEN);
  });

  test('A2 a withTenant key function rejecting with the parent key leaves a masked copy in cause', async () => {
    const crm = clientFor(fault()).withTenant('other', {
      apiKey: async () => {
        throw new Error(`fallback key ${API_KEY} revoked`);
      },
    });
    const { error } = await failure(crm.opportunities.get(OPP_ID));
    expectAbsent(error, API_KEY);
  });
});

describe('encodings not masked', () => {
  test('A3 a 500 whose body is not valid JSON but holds the key as JSON unicode escapes', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(404, `{"message":"bad key ${uEscaped(API_KEY)}"`, { headers: { 'content-type': 'application/json' } }),
    );
    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmNotFoundError);
    // The escaped form decodes to the key for anyone who reads it.
    expect(String((error as Error).message)).not.toContain(uEscaped(API_KEY).slice(0, 60));
  });

  test('A3b a 200 text body (not JSON) with the key as JSON unicode escapes', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(200, `{"success":true,"data":{"id":"${uEscaped(API_KEY)}"`, {
        headers: { 'content-type': 'application/json' },
      }),
    );
    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect(String((error as Error).message)).not.toContain(uEscaped(API_KEY).slice(0, 60));
  });

  test("A4 form-encoded (URLSearchParams) key containing ! ~ ' ( )", async () => {
    const KEY = "key_live!5ecret~(x)'y";
    const echoed = new URLSearchParams({ k: KEY }).toString().slice(2);
    fault().otherwise('GET', OPP_PATH, reply.with(404, { message: `unknown key ${echoed}` }));
    const { error } = await failure(clientFor(fault(), { apiKey: KEY }).opportunities.get(OPP_ID));
    expect((error as Error).message).not.toContain(echoed);
  });

  test('A5 URL-encoded with every byte percent-encoded', async () => {
    const echoed = [...Buffer.from(API_KEY)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    fault().otherwise('GET', OPP_PATH, reply.with(404, { message: `unknown key ${echoed}` }));
    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    expect((error as Error).message).not.toContain(echoed);
  });

  test('A6 a cross-origin redirect whose path holds the README-style key: the note masks its URL-normalised form', async () => {
    const KEY = 'Key/Live+5ecret "0ne"';
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(302, '', { headers: { location: `http://evil.example/steal/${KEY}` } }),
    );
    const { error } = await failure(clientFor(fault(), { apiKey: KEY, maxRetries: 0 }).opportunities.get(OPP_ID));
    const normalised = new URL(`http://evil.example/steal/${KEY}`).pathname.slice('/steal/'.length);
    expect((error as Error).message).not.toContain(normalised);
  });

  test('A7 a same-origin redirect whose path holds the key: the logged url masks its URL-normalised form', async () => {
    const KEY = 'Key/Live+5ecret "0ne"';
    fault().script(
      'GET',
      OPP_PATH,
      reply.with(302, '', { headers: { location: `/integrations/v1/opportunities/x/${KEY}` } }),
    );
    const lines: string[] = [];
    const entries: CrmRequestLog[] = [];
    const crm = clientFor(fault(), {
      apiKey: KEY,
      maxRetries: 0,
      logger: (l, e) => {
        lines.push(l);
        entries.push(e);
      },
    });
    await failure(crm.opportunities.get(OPP_ID));
    const normalised = new URL(`http://h/${KEY}`).pathname.slice(1);
    expect(lines.join('\n')).not.toContain(normalised);
    expect(JSON.stringify(entries)).not.toContain(normalised);
  });
});

describe('headers reach the message unmasked', () => {
  test('A10 a 200 non-JSON body whose content-type echoes the key', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(200, 'hello', { headers: { 'content-type': `text/plain; k=${API_KEY}` } }),
    );
    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expectAbsent(error, API_KEY);
  });

  test('A10b apiKey.generate() 200 non-JSON whose content-type echoes the admin token', async () => {
    fault().otherwise(
      'POST',
      '/integrations/api-key/generate',
      reply.with(200, 'x', { headers: { 'content-type': `text/plain; t=${ADMIN_TOKEN}` } }),
    );
    const { error } = await failure(clientFor(fault()).apiKey.generate());
    expectAbsent(error, ADMIN_TOKEN);
  });

  test('A11 a content-type with a tab and C1 control characters (NEL) is escaped and cut in the message', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(200, 'hello', {
        headers: { 'content-type': `text/plain;\tx=1\x85crm GET /forged 200${'y'.repeat(2000)}` },
      }),
    );
    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    const { message } = error as Error;
    const controls = [...message].filter(
      (c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f),
    );
    expect(controls, JSON.stringify(message.slice(0, 120))).toEqual([]);
    expect(message.length).toBeLessThan(800);
  });
});

describe('secret headers echoed by the server (README: "a secret header echoed in bodies, headers")', () => {
  test('A12 a redactHeaders value echoed in the body and a response header', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(400, { message: 'bad vault token vault_5ecret_tok' }, { headers: { 'x-echo': 'vault_5ecret_tok' } }),
    );
    const crm = clientFor(fault(), {
      redactHeaders: ['x-vault-token'],
      headers: { 'x-vault-token': 'vault_5ecret_tok' },
    });
    const { error } = await failure(crm.opportunities.get(OPP_ID));
    expectAbsent(error, 'vault_5ecret_tok');
  });

  test('A12b a proxy-authorization value echoed in the body', async () => {
    fault().otherwise('GET', OPP_PATH, reply.with(400, { message: 'proxy said Basic cHJveHk6NWVjcmV0' }));
    const crm = clientFor(fault(), { headers: { 'proxy-authorization': 'Basic cHJveHk6NWVjcmV0' } });
    const { error } = await failure(crm.opportunities.get(OPP_ID));
    expectAbsent(error, 'cHJveHk6NWVjcmV0');
  });
});

describe('held (control cases)', () => {
  test('H1 key in a header name, set-cookie, status text, deep nesting (depth 40), arrays of arrays, JSON string body', async () => {
    let deep: unknown = API_KEY;
    for (let i = 0; i < 40; i++) deep = i % 2 ? [deep] : { k: deep };
    fault().script(
      'GET',
      OPP_PATH,
      reply.with(
        404,
        { message: API_KEY.toUpperCase(), deep, aa: [[[[API_KEY]]]] },
        {
          headers: {
            [`x-${API_KEY}`]: '1',
            'set-cookie': `s=${API_KEY}`,
            'x-b64': Buffer.from(API_KEY).toString('base64url'),
          },
        },
      ),
    );
    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    expectAbsent(error, API_KEY);
    fault().script(
      'GET',
      OPP_PATH,
      reply.with(404, JSON.stringify(`key ${API_KEY}`), { headers: { 'content-type': 'application/json' } }),
    );
    const second = await failure(clientFor(fault()).opportunities.get(OPP_ID));
    expectAbsent(second.error, API_KEY);
  });

  test('H2 baseUrl with userinfo / query / fragment is refused without echoing the password', () => {
    for (const baseUrl of [
      'http://u:pa55word@h.example',
      'HTTP://u:pa55word@h.example/',
      ' http://u:pa55word@h.example ',
      'http://\\u:pa55word@h.example',
      'http://h.example/?pa55word',
      'http://h.example/#pa55word',
      'http:u:pa55word@h.example',
    ]) {
      let thrown: unknown;
      try {
        clientFor(fault(), { baseUrl });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, baseUrl).toBeInstanceOf(CrmValidationError);
      expectAbsent(thrown, 'pa55word');
    }
  });
});
