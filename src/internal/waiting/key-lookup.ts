import type { ApiKeyProvider } from '../../options';
import { AttemptFailure } from '../call/failure';
import type { Waits } from './wait';

/**
 * What the call's `apiKey` function returns for its tenant. What it throws comes back as an
 * `AttemptFailure` of kind `key`, which the transport reports with that error as `cause`. The
 * look-up counts against the call's `totalTimeout` and stops waiting when its signal aborts.
 */
export function lookUpKey(
  keyFrom: ApiKeyProvider,
  tenantId: string,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  waits: Waits,
): Promise<unknown> {
  const failed = (cause: unknown) => new AttemptFailure({ kind: 'key', cause });
  let looked: Promise<unknown>;
  try {
    looked = Promise.resolve(keyFrom({ tenantId }));
  } catch (cause) {
    return Promise.reject(failed(cause));
  }
  if (!signal && deadline === undefined) return looked.catch((cause: unknown) => Promise.reject(failed(cause)));
  const waiting = waits.start<unknown>(signal, deadline);
  looked.then(waiting.done, (cause: unknown) => waiting.fail(failed(cause)));
  return waiting.promise;
}
