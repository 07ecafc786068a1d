import { isHTTPError, type RetryOptions } from 'ky';
import type { Kit } from './kit';

/**
 * When ky may retry. GET, PUT and DELETE (`crm.request()`'s) are safe to repeat: they are retried
 * on 408, 429, 5xx, network errors and timeouts. The API has no idempotency keys, so a POST (or
 * `crm.request()`'s PATCH) is retried only when the answer proves it was not acted on: 429, or 503
 * with `Retry-After`.
 */
export const retryPolicy = ({ retryAfterMsOf }: Kit): RetryOptions => ({
  methods: ['get', 'put', 'post', 'patch', 'delete'],
  statusCodes: [408, 429, 500, 502, 503, 504],
  afterStatusCodes: [429, 503],
  backoffLimit: 8_000,
  // Keeps at least half the backoff, so a burst of retries spreads out without any being immediate.
  jitter: (delay) => delay * (0.5 + Math.random() * 0.5),
  retryOnTimeout: true,
  shouldRetry: ({ error, retryCount }) => {
    const context = (error as { options?: { context?: PacedContext } }).options?.context;
    // A wait the call's totalTimeout cannot afford is not waited for: the caller gets the server's
    // hint now (a paced call's, which ky is told is 0, in a header of its own).
    if (isHTTPError(error)) {
      const { headers } = error.response;
      const wait = context?.pacer ? Number(headers.get(PACED_WAIT)) || undefined : retryAfterMsOf(headers);
      if (outlastsDeadline(wait, error.options.context)) return false;
    }
    // A paced call's refusal (429, or 503 with Retry-After) is its turn to wait (pacer.ts), not a
    // failure: only its other retries count against maxRetries. Unless its key is refused whatever
    // its pace (pacer.ts, `hopeless`): then they count, as without a pacer.
    if (context?.pacer) {
      const { status, headers } = isHTTPError(error) ? error.response : { status: 0, headers: new Headers() };
      const refused = status === 429 || (status === 503 && headers.has('retry-after'));
      if (refused && !context.pacer.hopeless) context.refusals = (context.refusals ?? 0) + 1;
      else if (retryCount - (context.refusals ?? 0) > context.maxRetries) return false;
    }
    const method = (error as { request?: Request }).request?.method;
    if (method !== 'POST' && method !== 'PATCH') return undefined;
    if (!isHTTPError(error)) return false;
    const { status, headers } = error.response;
    return status === 429 || (status === 503 && headers.has('retry-after')) ? undefined : false;
  },
});

/** What the retrier tells the policy of a paced call, through ky's `context`; `refusals` the policy counts. */
interface PacedContext {
  readonly pacer?: { readonly hopeless: boolean } | undefined;
  readonly maxRetries: number;
  refusals?: number;
}

/** The header of ky's copy of an answer that carries a paced call's real wait, in ms. */
export const PACED_WAIT = 'x-crm-paced-wait';

/** Whether the call's deadline comes before the wait; its settings reach the policy through ky's `context` (retrier.ts). */
function outlastsDeadline(wait: number | undefined, context: Record<string, unknown>): boolean {
  const { deadline, maxRetryAfter } = context as { deadline?: number; maxRetryAfter: number };
  return deadline !== undefined && wait !== undefined && Math.min(wait, maxRetryAfter) >= deadline - Date.now();
}
