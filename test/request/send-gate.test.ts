import { describe, expect, test } from 'vitest';
import { CrmError } from '../../src/core/errors';
import { CrmClient } from '../../src/index';
import { type SendGate, unsentOnly } from '../../src/internal/call/unsent';
import { throughMsw } from '../support/fake-harness';

/* A call's send gate (call/unsent.ts): awaited once its first attempt has its turn, just before it goes. */

/** Request options whose signal carries a gate of `pass` (and `withdraw`). */
const gated = (
  pass: SendGate['pass'],
  signal: AbortSignal = new AbortController().signal,
  withdraw: SendGate['withdraw'] = () => {},
) => ({
  signal: unsentOnly(AbortSignal.any([signal]), undefined, { pass, withdraw }),
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

  test('after an attempt answered with nothing done, is withdrawn and passed again before the retry', async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, throttle: 'off' });
    fake.failNext({ endpoint: 'createAccount', status: 429, retryAfter: 0 });
    const order: string[] = [];
    await crm.accounts.create(
      { name: 'Retried' },
      gated(
        async () => void order.push(`pass, ${fake.requests.length} sent`),
        undefined,
        () => void order.push(`withdraw, ${fake.requests.length} sent`),
      ),
    );
    expect(order).toEqual(['pass, 0 sent', 'withdraw, 1 sent', 'pass, 1 sent']);
    expect(fake.requests.length).toBe(2);
  });

  test('after an attempt that may have acted, stands: the retry goes without passing it again', async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, throttle: 'off' });
    const account = await crm.accounts.create({ name: 'Read' });
    const created = await crm.opportunities.create({ name: 'Deal', accountId: account.id, amount: 1 });
    fake.failNext({ endpoint: 'getOpportunity', drop: true });
    let passes = 0;
    let withdrawals = 0;
    await crm.opportunities.get(
      created.id,
      gated(
        async () => void passes++,
        undefined,
        () => void withdrawals++,
      ),
    );
    expect(fake.requests.filter((r) => r.endpoint === 'getOpportunity')).toHaveLength(2);
    expect([passes, withdrawals]).toEqual([1, 0]);
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
