import { ApiKeySchema } from '../options';
import { AttemptFailure } from './attempt';
import { check } from './check';
import type { PreparedCall } from './prepared-call';
import { redactor } from './redact';

/**
 * What the call's `apiKey` function returns for the call's tenant. What it throws comes back as
 * an `AttemptFailure` of kind `key`, which the transport reports with that error as `cause`.
 */
export async function lookUpKey({ keyFrom, scope }: PreparedCall): Promise<unknown> {
  try {
    return await keyFrom?.({ tenantId: scope.tenantId as string });
  } catch (cause) {
    throw new AttemptFailure({ kind: 'key', cause });
  }
}

/**
 * Gives `call` a key its `apiKey` function returned, held to the rules of a configured key and
 * masked like one. Throws a `CrmValidationError` that does not show the key.
 */
export function useKey(call: PreparedCall, key: unknown): void {
  const { apiKey } = check(ApiKeySchema, { apiKey: key }, 'The apiKey function returned an unusable key');
  call.init.headers = { ...call.init.headers, 'x-api-key': apiKey };
  call.redact = redactor([...call.scope.secrets, apiKey]);
}
