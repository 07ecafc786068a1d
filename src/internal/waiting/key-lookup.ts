import type { ApiKeyProvider } from '../../options';
import { AttemptFailure } from '../call/failure';
import type { Waits } from './wait';

/**
 * What the call's `apiKey` function returns for its tenant. What it throws comes back as an
 * `AttemptFailure` of kind `key`, which the transport reports with that error as `cause`. The
 * look-up counts against the call's `totalTimeout` and stops waiting when its signal aborts.
 * `answered` runs once the function has answered (returned, thrown, settled), which may be after
 * the call stopped waiting: the function is given no signal, so nothing stops it.
 */
export function lookUpKey(
  keyFrom: ApiKeyProvider,
  tenantId: string,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  waits: Waits,
  answered: () => void = () => {},
): Promise<unknown> {
  const failed = (cause: unknown) => new AttemptFailure({ kind: 'key', cause });
  let looked: Promise<unknown>;
  try {
    looked = Promise.resolve(keyFrom({ tenantId }));
  } catch (cause) {
    answered();
    return Promise.reject(failed(cause));
  }
  looked.then(answered, answered);
  if (!signal && deadline === undefined) return looked.catch((cause: unknown) => Promise.reject(failed(cause)));
  const waiting = waits.start<unknown>(signal, deadline);
  looked.then(waiting.done, (cause: unknown) => waiting.fail(failed(cause)));
  return waiting.promise;
}
