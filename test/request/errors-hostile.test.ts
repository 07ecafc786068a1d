import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import {
  CrmAbortError,
  CrmApiError,
  CrmClient,
  CrmConnectionError,
  CrmError,
  CrmNotFoundError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmTimeoutError,
  CrmValidationError,
} from '../../src/index';
import { ADMIN_TOKEN, API_KEY, rejection, TENANT } from '../support/capture';

/*
 * Errors from hostile servers, hostile fetch implementations and odd abort reasons: always a
 * CrmError of the right class, and never a credential in the message, JSON.stringify(),
 * util.inspect() or a log line.
 */

const WIDGETS = 'integrations/v1/widgets';

/** A client whose fetch answers (or fails) as `answer` says. */
function clientAnswering(
  answer: (request: Request, attempt: number) => Response | Promise<Response>,
  options: ConstructorParameters<typeof CrmClient>[0] = {},
) {
  let attempt = 0;
  return new CrmClient({
    baseUrl: 'https://crm.test',
    apiKey: API_KEY,
    tenantId: TENANT,
    adminToken: ADMIN_TOKEN,
    maxRetries: 0,
    fetch: async (input, init) => answer(new Request(input, init), attempt++),
    ...options,
  });
}

/** Every way an error reaches a person: message, stack, JSON, inspect with hidden fields. */
const renderings = (error: unknown): string[] => [
  String((error as Error).message),
  String((error as Error).stack),
  JSON.stringify(error),
  inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
];

const base64 = btoa(API_KEY).replace(/=+$/, '');

function expectNoSecret(error: unknown, secrets: readonly string[] = [API_KEY, ADMIN_TOKEN, base64]): void {
  for (const text of renderings(error)) for (const secret of secrets) expect(text).not.toContain(secret);
  const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
  expect(json).not.toHaveProperty('headers');
}

describe('server answers that echo the key, on crm.request()', () => {
  const echo = { 'x-echo': API_KEY, 'set-cookie': `s=${API_KEY}`, 'x-request-id': 'req_1' };
  test.each([
    [
      '404 with the key in code, message, details (nested, as a key name, base64)',
      () =>
        Response.json(
          {
            success: false,
            error: {
              code: `NO_${API_KEY}`,
              message: `bad key ${API_KEY}`,
              details: { [API_KEY]: [{ deep: { deeper: `x${base64}x` } }], echoed: encodeURIComponent(API_KEY) },
            },
          },
          { status: 404, headers: echo },
        ),
      CrmNotFoundError,
    ],
    [
      '200 with success: false',
      () => Response.json({ success: false, error: { code: API_KEY, details: [API_KEY] } }, { headers: echo }),
      CrmApiError,
    ],
    [
      'not JSON',
      () => new Response(`<html>${API_KEY}</html>`, { headers: { 'content-type': 'text/html', ...echo } }),
      CrmResponseValidationError,
    ],
    ['not an envelope', () => Response.json({ data: API_KEY }, { headers: echo }), CrmResponseValidationError],
    [
      'success as a string',
      () => Response.json({ success: 'true', data: API_KEY }, { headers: echo }),
      CrmResponseValidationError,
    ],
    ['JSON null', () => Response.json(null, { headers: echo }), CrmResponseValidationError],
    [
      'a JSON-escaped key',
      () => new Response(`{"success":false,"error":{"code":"${API_KEY.replace(/k/g, '\\u006b')}"}}`, { status: 400 }),
      CrmApiError,
    ],
    [
      'too large',
      () => new Response(`{"success":true,"data":"${API_KEY}${'x'.repeat(2000)}"}`, { headers: echo }),
      CrmResponseTooLargeError,
    ],
  ])('%s: masked everywhere, headers left out of toJSON()', async (_name, answer, ErrorClass) => {
    const crm = clientAnswering(answer, { maxResponseBytes: 1000 });

    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));

    expect(error).toBeInstanceOf(ErrorClass);
    expectNoSecret(error);
  });

  test('code and details of a success: false envelope read from the masked body', async () => {
    const crm = clientAnswering(() =>
      Response.json({ success: false, error: { code: 'E', details: { key: API_KEY } } }, { status: 422 }),
    );
    const error = (await rejection(crm.request({ method: 'GET', path: WIDGETS }))) as CrmApiError;
    expect(error.code).toBe('E');
    expect(error.details).toEqual({ key: '[redacted]' });
  });

  test.each([
    ['an array', ['a']],
    ['a number', 5],
    ['null', null],
    ['a code that is a number and details that are null', { code: 5, details: null }],
    ['a code that is an object', { code: { a: 1 } }],
  ])('error as %s: code undefined, no throw', async (_name, errorField) => {
    const crm = clientAnswering(() => Response.json({ success: false, error: errorField }, { status: 400 }));
    const error = (await rejection(crm.request({ method: 'GET', path: WIDGETS }))) as CrmApiError;
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error.code).toBeUndefined();
  });

  test('a huge error body: message bounded, body kept masked', async () => {
    const crm = clientAnswering(() =>
      Response.json({ success: false, error: { message: `${'m'.repeat(1_000_000)}${API_KEY}` } }, { status: 400 }),
    );
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error.message.length).toBeLessThan(700);
    expectNoSecret(error);
  });

  test('keys of management calls never reach an error: the whole body is masked', async () => {
    const crm = clientAnswering(() =>
      Response.json({ success: false, error: { code: 'X', details: 'sk_new_secret' } }, { status: 400 }),
    );
    const error = (await rejection(crm.apiKey.generate())) as CrmApiError;
    expect(error.body).toBe('[redacted]');
    expect(error.details).toBeUndefined();
    expect(JSON.stringify(error)).not.toContain('sk_new_secret');
  });
});

describe('toJSON() on every error class', () => {
  test('a CrmValidationError from an apiKey function returning a bad key holds neither key', async () => {
    const bad = ` ${API_KEY} `;
    const crm = clientAnswering(() => Response.json({ success: true, data: {} }), { apiKey: () => bad });
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmValidationError);
    expectNoSecret(error, [API_KEY]);
  });

  test('a CrmError from an apiKey function that throws with the admin token in it holds no token', async () => {
    const crm = clientAnswering(() => Response.json({ success: true, data: {} }), {
      apiKey: () => {
        throw Object.assign(new Error(`vault: ${ADMIN_TOKEN}`), {
          token: ADMIN_TOKEN,
          config: { headers: { a: ADMIN_TOKEN } },
        });
      },
    });
    const error = await rejection(crm.request({ method: 'GET', path: WIDGETS }));
    expect(error).toBeInstanceOf(CrmError);
    expectNoSecret(error);
  });

  test('a CrmValidationError for a bad baseUrl holding userinfo without a scheme holds no password', () => {
    for (const baseUrl of [
      `user:${API_KEY}@crm.test`,
      `https://user:${API_KEY}@crm.test`,
      `//${API_KEY}@crm.test`,
      `https://${API_KEY}@crm.test/`,
      `HTTPS://x:${API_KEY}@crm.test`,
      `https:\\\\x:${API_KEY}@crm.test`,
      ` https://x:${API_KEY}@crm.test `,
    ]) {
      let error: unknown;
      try {
        new CrmClient({ baseUrl, apiKey: 'k', tenantId: 't' });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CrmValidationError);
      expectNoSecret(error, [API_KEY]);
    }
  });

  test('JSON.stringify of each error class names its class and never has headers', async () => {
    const crm = clientAnswering(() =>
      Response.json({ success: false }, { status: 500, headers: { 'x-api-key': API_KEY } }),
    );
    const errors: unknown[] = [
      await rejection(crm.request({ method: 'GET', path: WIDGETS })),
      new CrmValidationError([{ field: 'a', path: ['a'], message: 'm' }]),
      new CrmConnectionError('c', { cause: new Error(API_KEY) }),
      new CrmTimeoutError('t'),
      new CrmAbortError('a', { cause: API_KEY }),
      new CrmError('e'),
    ];
    for (const error of errors) {
      const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
      expect(json.name).toBe((error as Error).name);
      expect(json).not.toHaveProperty('headers');
      expect(json).not.toHaveProperty('cause');
    }
  });
});

describe("a caller's signal with an odd reason", () => {
  const hangs = (request: Request) =>
    new Promise<Response>((_, reject) => {
      request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
    });
  const abortedWith = async (reason: unknown) => {
    const crm = clientAnswering(hangs);
    const controller = new AbortController();
    const call = crm.request({ method: 'GET', path: WIDGETS }, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 5);
    return rejection(call);
  };

  test('a reason whose name getter throws: CrmAbortError, not the getter’s error', async () => {
    const error = await abortedWith({
      get name() {
        throw new Error('name getter');
      },
    });
    expect(error).toBeInstanceOf(CrmAbortError);
  });

  test('a Proxy reason whose every trap throws: CrmAbortError', async () => {
    const reason = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        getPrototypeOf: () => {
          throw new Error('trap');
        },
      },
    );
    const error = await abortedWith(reason);
    expect(error).toBeInstanceOf(CrmAbortError);
  });

  test('an already-aborted signal whose reason is another call’s CrmError: CrmAbortError naming this call, that error as cause', async () => {
    // Promise.all-style fail-fast: the first call's error aborts its siblings.
    const sibling = new CrmNotFoundError('404 from GET /integrations/v1/other', {
      status: 404,
      body: undefined,
      headers: new Headers(),
    });
    const crm = clientAnswering(() => Response.json({ success: true, data: {} }));
    const error = await rejection(
      crm.request({ method: 'GET', path: WIDGETS }, { signal: AbortSignal.abort(sibling) }),
    );
    expect(error).toBeInstanceOf(CrmAbortError);
    expect(error.message).toContain(WIDGETS);
    expect(error.cause).toBe(sibling);
  });

  test('a reason that is a CrmError while in flight: CrmAbortError too', async () => {
    const sibling = new CrmError('sibling failed');
    const error = await abortedWith(sibling);
    expect(error).toBeInstanceOf(CrmAbortError);
  });

  test("a plain object named 'TimeoutError' (not an error) is an abort, not a timeout", async () => {
    const error = await abortedWith({ name: 'TimeoutError' });
    expect(error).toBeInstanceOf(CrmAbortError);
    expect(error).not.toBeInstanceOf(CrmTimeoutError);
  });

  test.each([
    ['a DOMException TimeoutError', () => new DOMException('late', 'TimeoutError'), CrmTimeoutError],
    ['an Error named TimeoutError', () => Object.assign(new Error('late'), { name: 'TimeoutError' }), CrmTimeoutError],
    ['the string TimeoutError', () => 'TimeoutError', CrmAbortError],
    ['undefined (the default AbortError)', () => undefined, CrmAbortError],
    ['null', () => null, CrmAbortError],
  ])('%s', async (_name, reason, ErrorClass) => {
    const error = await abortedWith(reason());
    expect(error).toBeInstanceOf(ErrorClass);
  });
});
