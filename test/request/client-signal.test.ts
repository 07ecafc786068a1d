import { delay } from 'msw';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CrmAbortError, CrmValidationError } from '../../src/index';
import { capture, makeClient, ok, rejection } from '../support/capture';

/* One signal for a whole client: a job's shutdown in one line. */

const OPPORTUNITY = '/integrations/v1/opportunities/:id';
const never = () => delay('infinite').then(() => ok({}));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('new CrmClient({ signal })', () => {
  test('stops the call in flight and the calls queued for a slot at once, and sends no more', async () => {
    const seen = capture('get', OPPORTUNITY, never);
    const controller = new AbortController();
    const crm = makeClient({ signal: controller.signal, maxConcurrency: 1 });
    const calls = [crm.opportunities.get('opp_1'), crm.opportunities.get('opp_2'), crm.opportunities.get('opp_3')];
    await vi.waitFor(() => expect(seen).toHaveLength(1));

    controller.abort();
    const errors = await Promise.all(calls.map(rejection));

    expect(errors.map((e) => e.constructor)).toEqual([CrmAbortError, CrmAbortError, CrmAbortError]);
    expect(errors[1]?.message).toContain('while queued');
    expect(seen).toHaveLength(1);
  });

  test('stops the calls of every client derived from it, and a call made after it aborted sends nothing', async () => {
    const seen = capture('get', OPPORTUNITY, never);
    const controller = new AbortController();
    const crm = makeClient({ signal: controller.signal });
    const scoped = crm.withTenant('tenant_2', { apiKey: 'key_2' }).withOptions({ timeout: 60_000 });
    const call = scoped.opportunities.get('opp_1');
    await vi.waitFor(() => expect(seen).toHaveLength(1));

    controller.abort();

    expect(await rejection(call)).toBeInstanceOf(CrmAbortError);
    expect(await rejection(crm.opportunities.get('opp_2'))).toBeInstanceOf(CrmAbortError);
    expect(seen).toHaveLength(1);
  });

  test("withOptions({ signal }) and withTenant(id, { signal }) stop the derived client's calls, not the parent's", async () => {
    capture('get', OPPORTUNITY, ({ url }: Request) =>
      new URL(url).pathname.endsWith('opp_parent') ? ok({ id: 'opp_parent', name: 'kept' }) : never(),
    );
    const crm = makeClient();
    const job = new AbortController();
    const tenantJob = new AbortController();
    const scoped = crm.withOptions({ signal: job.signal });
    const tenant = crm.withTenant('tenant_2', { signal: tenantJob.signal });
    const calls = [scoped.opportunities.get('opp_1'), tenant.opportunities.get('opp_2')];

    job.abort();
    tenantJob.abort();

    for (const error of await Promise.all(calls.map(rejection))) expect(error).toBeInstanceOf(CrmAbortError);
    expect(await crm.opportunities.get('opp_parent')).toMatchObject({ name: 'kept' });
  });

  test("a call's own signal still stops that call alone", async () => {
    capture('get', OPPORTUNITY, ({ url }: Request) =>
      new URL(url).pathname.endsWith('opp_2') ? ok({ id: 'opp_2', name: 'x' }) : never(),
    );
    const crm = makeClient({ signal: new AbortController().signal });
    const own = new AbortController();
    const call = crm.opportunities.get('opp_1', { signal: own.signal });
    own.abort();
    expect(await rejection(call)).toBeInstanceOf(CrmAbortError);
    expect(await crm.opportunities.get('opp_2')).toMatchObject({ id: 'opp_2' });
  });

  test("joins a call's signal to the client's only when the client has one (no AbortSignal.any per call otherwise)", async () => {
    capture('get', OPPORTUNITY, ok({ id: 'opp_1', name: 'x' }));
    const any = vi.spyOn(AbortSignal, 'any');
    const signal = new AbortController().signal;

    await makeClient().opportunities.get('opp_1', { signal });
    // The attempt joins the call's signal to its timer: one.
    expect(any).toHaveBeenCalledTimes(1);

    any.mockClear();
    await makeClient({ signal }).opportunities.get('opp_1');
    expect(any).toHaveBeenCalledTimes(1);

    any.mockClear();
    await makeClient({ signal: new AbortController().signal }).opportunities.get('opp_1', { signal });
    expect(any).toHaveBeenCalledTimes(2);
  });

  test('refuses a signal that is not an AbortSignal', () => {
    expect(() => makeClient({ signal: {} as AbortSignal })).toThrow(CrmValidationError);
    expect(() => makeClient().withTenant('t2', { signal: 'stop' as never })).toThrow(CrmValidationError);
  });
});
