import type { AttemptKit } from './attempt';
import type { PreparedCall } from './prepared-call';

/**
 * What the call's `apiKey` function returns for the call's tenant. What it throws comes back as
 * an `AttemptFailure` of kind `key`, which the transport reports with that error as `cause`. The
 * look-up counts against the call's `totalTimeout` and stops waiting when its signal aborts.
 */
export function lookUpKey(
  { keyFrom, scope, settings, deadline }: PreparedCall,
  { AttemptFailure }: AttemptKit,
): Promise<unknown> {
  const failed = (cause: unknown) => new AttemptFailure({ kind: 'key', cause });
  let looked: Promise<unknown>;
  try {
    looked = Promise.resolve(keyFrom?.({ tenantId: scope.tenantId as string })).catch((cause: unknown) => {
      throw failed(cause);
    });
  } catch (cause) {
    return Promise.reject(failed(cause));
  }
  const { signal } = settings;
  if (!signal && deadline === undefined) return looked;
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal?.reason);
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(() => reject(new AttemptFailure({ kind: 'timeout' })), Math.max(0, deadline - Date.now()));
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
    looked.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    });
  });
}
