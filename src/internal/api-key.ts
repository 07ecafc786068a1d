import { CrmError } from '../core/errors';
import { ApiKeySchema } from '../options';
import { check } from './check';
import type { PreparedCall } from './prepared-call';
import { redactor } from './redact';

/**
 * Gives `call` the key its `apiKey` function returns for the call's tenant, held to the rules of
 * a configured key and masked like one. Rejects with a `CrmError` whose `cause` is what the
 * function threw, or with a `CrmValidationError` that does not show the key; either way nothing
 * is sent.
 */
export async function lookUpKey(call: PreparedCall): Promise<void> {
  const { scope, keyFrom } = call;
  const tenantId = scope.tenantId as string;
  let key: unknown;
  try {
    key = await keyFrom?.({ tenantId });
  } catch (cause) {
    throw new CrmError(`The apiKey function failed for tenant "${tenantId}"; nothing was sent`, { cause });
  }
  const { apiKey } = check(ApiKeySchema, { apiKey: key }, 'The apiKey function returned an unusable key');
  call.init.headers = { ...call.init.headers, 'x-api-key': apiKey };
  call.redact = redactor([...scope.secrets, apiKey]);
}
