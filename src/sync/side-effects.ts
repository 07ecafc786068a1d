import { CrmApiError, CrmValidationError } from '../core/errors';

/**
 * Whether a failed request may have acted: `error.sideEffects` where the error carries it, else
 * the same reading of it (a 4xx, a 429 and a 503 with Retry-After prove nothing was done; bad
 * input was never sent). Anything else, a bug included, may have acted.
 */
export function sideEffectsOf(error: unknown): 'none' | 'unknown' {
  const declared = (error as { sideEffects?: unknown } | null)?.sideEffects;
  if (declared === 'none' || declared === 'unknown') return declared;
  if (error instanceof CrmValidationError) return 'none';
  if (error instanceof CrmApiError) {
    return error.status < 500 || (error.status === 503 && error.retryAfterMs !== undefined) ? 'none' : 'unknown';
  }
  return 'unknown';
}
