import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/**
 * What the call's `apiKey` function returns for the call's tenant. What it throws comes back as
 * an `AttemptFailure` of kind `key`, which the transport reports with that error as `cause`. The
 * look-up counts against the call's `totalTimeout` and stops waiting when its signal aborts.
 */
export function lookUpKey(
  { keyFrom, scope, settings, deadline }: PreparedCall,
  { AttemptFailure }: Kit,
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
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Whichever comes first, the key, the abort or the deadline, leaves nothing behind.
    const settle =
      <T>(to: (value: T) => void) =>
      (value: T) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        to(value);
      };
    const stop = () => settle(reject)(signal?.reason);
    if (deadline !== undefined) {
      timer = setTimeout(
        () => settle(reject)(new AttemptFailure({ kind: 'timeout' })),
        Math.max(0, deadline - Date.now()),
      );
    }
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
    looked.then(settle(resolve), settle(reject));
  });
}
