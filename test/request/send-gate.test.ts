import { describe, expect, test } from 'vitest';
import { CrmError } from '../../src/core/errors';
import { CrmClient } from '../../src/index';
import { type SendGate, unsentOnly } from '../../src/internal/call/unsent';
import { throughMsw } from '../support/fake-harness';

/* A call's send gate (call/unsent.ts): awaited once its first attempt has its turn, just before it goes. */

/** Request options whose signal carries `gate`. */
const gated = (gate: SendGate, signal: AbortSignal = new AbortController().signal) => ({
  signal: unsentOnly(AbortSignal.any([signal]), undefined, gate),
});

describe('a send gate', () => {
  test('is awaited before the request reaches the server, and the request waits for it', async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    let seenAtGate = -1;
    const gate = async () => {
      seenAtGate = fake.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(fake.requests.length).toBe(0);
    };
    await crm.accounts.create({ name: 'Gated' }, gated(gate));
    expect(seenAtGate).toBe(0);
    expect(fake.requests.length).toBe(1);
  });

  test('is passed only once the call has its maxConcurrency slot: one gate at a time with one slot', async () => {
    const { fake, baseUrl } = await throughMsw({ latencyMs: 5 });
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxConcurrency: 1 });
    const answeredAtGate: number[] = [];
    const gate = async () => {
      answeredAtGate.push(fake.store.accounts.size);
    };
    await Promise.all([0, 1, 2].map((i) => crm.accounts.create({ name: `A${i}` }, gated(gate))));
    // Each call's gate ran once the call before it was answered, not while it waited for its slot.
    expect(answeredAtGate).toEqual([0, 1, 2]);
  });

  test('is passed after the apiKey function answered', async () => {
    const { fake, baseUrl } = await throughMsw();
    const order: string[] = [];
    const crm = new CrmClient({
      baseUrl,
      tenantId: fake.tenantId,
      apiKey: async () => {
        order.push('key');
        return fake.credentials.apiKey as string;
      },
    });
    await crm.accounts.create(
      { name: 'Keyed' },
      gated(async () => void order.push('gate')),
    );
    expect(order).toEqual(['key', 'gate']);
  });

  test('that rejects stops the call unsent, with a CrmError whose sideEffects are none and whose cause is its reason', async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    const reason = new Error('journal full');
    const error = await crm.accounts
      .create(
        { name: 'Refused' },
        gated(() => Promise.reject(reason)),
      )
      .catch((e) => e);
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ sideEffects: 'none', cause: reason });
    expect(fake.requests.length).toBe(0);
    expect(fake.store.accounts.size).toBe(0);
  });

  test('is not awaited again for a retry', async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, throttle: 'off' });
    fake.failNext({ endpoint: 'createAccount', status: 429, retryAfter: 0 });
    let gates = 0;
    await crm.accounts.create(
      { name: 'Retried' },
      gated(async () => void gates++),
    );
    expect(fake.requests.length).toBe(2);
    expect(gates).toBe(1);
  });

  test("is kept when the call's signal joins the client's", async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, signal: new AbortController().signal });
    let gates = 0;
    await crm.accounts.create(
      { name: 'Joined' },
      gated(async () => void gates++),
    );
    expect(gates).toBe(1);
  });

  test('whose call is aborted while it waits for its turn is never awaited', async () => {
    const { fake, baseUrl } = await throughMsw({ latencyMs: 20 });
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxConcurrency: 1 });
    const controller = new AbortController();
    let gates = 0;
    const first = crm.accounts.create({ name: 'First' });
    const second = crm.accounts
      .create(
        { name: 'Second' },
        gated(async () => void gates++, controller.signal),
      )
      .catch((error: unknown) => error);
    controller.abort(new Error('stop'));
    await first;
    expect(await second).toMatchObject({ sideEffects: 'none' });
    expect(gates).toBe(0);
    expect(fake.requests.length).toBe(1);
  });
});
