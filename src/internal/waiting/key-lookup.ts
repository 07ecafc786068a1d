import type { ApiKeyProvider } from '../../options';
import { AttemptFailure } from '../call/failure';
import { Limiter } from './limiter';
import type { Waits } from './wait';

/**
 * The places of `apiKey` look-ups under `maxConcurrency`: `max` for each tenant, so that one
 * tenant's hung provider (a vault shard down) holds its own tenant's places only. A look-up holds
 * its place until the function answers, even after its call gave up: the function cannot be
 * stopped, and a tenant whose calls give up one after another must not start look-ups one after
 * another. A tenant with no look-up running holds nothing here.
 */
export class KeyLookupPlaces {
  readonly #max: number;
  readonly #tenants = new Map<string, Limiter>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Resolves (or returns undefined) once the call holds one of its tenant's places; `answered` gives it back. */
  acquire(
    tenantId: string,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
  ): { readonly held: Promise<void> | undefined; readonly answered: () => void } {
    let places = this.#tenants.get(tenantId);
    if (!places) {
      places = new Limiter(this.#max, 'key');
      this.#tenants.set(tenantId, places);
    }
    const limiter = places;
    const answered = () => {
      limiter.release();
      if (limiter.idle && this.#tenants.get(tenantId) === limiter) this.#tenants.delete(tenantId);
    };
    return { held: limiter.acquire(signal, deadline), answered };
  }
}

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
