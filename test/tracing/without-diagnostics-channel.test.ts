import { afterEach, describe, expect, test } from 'vitest';
import { type CrmClient, CrmNotFoundError } from '../../src/index';
import { instrumentCrm } from '../../src/otel/index';
import { capture, makeClient, ok, rejection } from '../support/capture';
import { record } from '../support/tracing-channels';

const OPP = { id: 'opp_1', name: 'Deal', accountId: 'acc_1' };
const original = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
afterEach(() => {
  if (original) Object.defineProperty(process, 'getBuiltinModule', original);
});

/** As a runtime whose process has no getBuiltinModule (Node before 22.3, a partial polyfill), or one that gives other things. */
function runtime(getBuiltinModule: unknown): void {
  Object.defineProperty(process, 'getBuiltinModule', { value: getBuiltinModule, configurable: true, writable: true });
}

async function works(crm: CrmClient) {
  capture('get', '/integrations/v1/opportunities/opp_1', ok(OPP));
  capture('get', '/integrations/v1/opportunities/missing', () => Response.json({ success: false }, { status: 404 }));
  await expect(crm.opportunities.get('opp_1')).resolves.toMatchObject({ id: 'opp_1' });
  expect(await rejection(crm.opportunities.get('missing', { maxRetries: 0 }))).toBeInstanceOf(CrmNotFoundError);
}

describe('where there is no node:diagnostics_channel, the SDK works and traces nothing', () => {
  test.each([
    ['no getBuiltinModule', undefined],
    ['a getBuiltinModule that knows no diagnostics_channel', () => undefined],
    ['a diagnostics_channel without tracingChannel', () => ({ channel() {} })],
  ])('%s', async (_, getBuiltinModule) => {
    // A subscriber on the real channels: the client made under this runtime must not publish to it.
    const { events } = record();
    runtime(getBuiltinModule);
    const crm = makeClient();
    const stop = instrumentCrm();

    await works(crm);

    stop();
    expect(events).toEqual([]);
  });
});

describe('a runtime whose getBuiltinModule throws for diagnostics_channel', () => {
  test('new CrmClient() and instrumentCrm() should not throw', async () => {
    runtime(() => {
      throw new Error('ERR_UNKNOWN_BUILTIN_MODULE');
    });

    expect(() => instrumentCrm()).not.toThrow();
    expect(() => makeClient()).not.toThrow();
  });
});
