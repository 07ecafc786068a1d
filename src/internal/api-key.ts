import { ApiKeySchema } from '../options';
import { check } from './check';
import type { PreparedCall } from './prepared-call';

/**
 * Gives `call` a key its `apiKey` function returned, held to the rules of a configured key and
 * masked like one. Throws a `CrmValidationError` that does not show the key.
 */
export function useKey(call: PreparedCall, key: unknown): void {
  const { apiKey } = check(ApiKeySchema, { apiKey: key }, 'The apiKey function returned an unusable key');
  call.init.headers = { ...call.init.headers, 'x-api-key': apiKey };
  call.secrets = [...call.secrets, apiKey];
}
