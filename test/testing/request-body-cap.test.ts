import { http, passthrough } from 'msw';
import { afterEach, describe, expect, test } from 'vitest';
import { CrmApiError, CrmClient } from '../../src/index';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/index';
import { failure } from '../support/fault-server';
import { server as msw } from '../support/msw-server';

/*
 * The fake over real HTTP caps request bodies as an API gateway does: 413 PAYLOAD_TOO_LARGE, and
 * the rest of the body is not read, so a huge POST cannot take the process's memory.
 */

const MiB = 1024 * 1024;
let srv: FakeCrmServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});
const start = async (options: Parameters<typeof startFakeCrmServer>[0] = {}) => {
  msw.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
  srv = await startFakeCrmServer(options);
  return srv;
};
const contactsUrl = (server: FakeCrmServer) =>
  `${server.url}/integrations/v1/contacts?tenantId=${server.fake.credentials.tenantId}`;

/** A body of `total` bytes made as it is read; `pulled()` says how much of it was. */
function lazyBody(total: number) {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => sent };
}

describe('request bodies over maxRequestBytes', () => {
  test('a body whose content-length is over 4 MiB is answered 413 with the error shape, and logged', async () => {
    const server = await start();

    const response = await fetch(contactsUrl(server), {
      method: 'POST',
      headers: { 'x-api-key': server.fake.credentials.apiKey ?? '', 'content-type': 'application/json' },
      body: JSON.stringify({ firstName: 'x'.repeat(5 * MiB) }),
    });

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body over 4194304 bytes: the rest was not read' },
    });
    expect(response.headers.get('connection')).toBe('close');
    expect(server.fake.requests.at(-1)).toMatchObject({ method: 'POST', status: 413, body: undefined });
    expect(server.fake.store.contacts.size).toBe(0);
  });

  test('a streamed 256 MiB body without a content-length is refused once over the cap, having been read only so far', async () => {
    const server = await start({ maxRequestBytes: MiB });
    const body = lazyBody(256 * MiB);

    const status = await fetch(contactsUrl(server), {
      method: 'POST',
      headers: { 'x-api-key': server.fake.credentials.apiKey ?? '', 'content-type': 'application/json' },
      body: body.stream,
      duplex: 'half',
    } as RequestInit).then(
      (response) => response.status,
      () => 'connection closed',
    );

    expect([413, 'connection closed']).toContain(status);
    expect(server.fake.requests.at(-1)?.status).toBe(413);
    // The cap, plus what the sockets' buffers held: nowhere near the whole body.
    expect(body.pulled()).toBeLessThan(32 * MiB);
  });

  test('a body of exactly maxRequestBytes is read and answered as usual; one byte more is not', async () => {
    const server = await start({ maxRequestBytes: 1_000 });
    const headers = { 'x-api-key': server.fake.credentials.apiKey ?? '', 'content-type': 'application/json' };
    const bodyOf = (size: number) => {
      const start = `{"tenantId":"${server.fake.credentials.tenantId}","firstName":"`;
      return `${start}${'a'.repeat(size - start.length - 2)}"}`;
    };

    const atCap = await fetch(contactsUrl(server), { method: 'POST', headers, body: bodyOf(1_000) });
    const over = await fetch(contactsUrl(server), { method: 'POST', headers, body: bodyOf(1_001) });

    expect(atCap.status).toBe(201);
    expect(over.status).toBe(413);
    expect(server.fake.store.contacts.size).toBe(1);
  });

  test("the SDK reports the fake's 413 as a CrmApiError with its code, and does not retry it", async () => {
    const server = await start({ maxRequestBytes: 64 * 1024 });
    const crm = new CrmClient({ ...server.fake.credentials, baseUrl: server.url });

    const { error } = await failure(
      crm.contacts.create({ firstName: 'Ada' }, { extraBody: { notes: 'n'.repeat(100_000) } }),
    );

    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(server.fake.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  test.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'maxRequestBytes %s is refused with a RangeError',
    async (max) => {
      await expect(startFakeCrmServer({ maxRequestBytes: max })).rejects.toThrow(RangeError);
    },
  );
});
