/**
 * What the `crm-integration-sdk:call` tracing channel publishes around each SDK method call (each
 * page request of a list is a call). Fields marked "once known" are set before the call's
 * `asyncStart` and `asyncEnd` (or `error`) events. Neither channel publishes a call's data or an
 * attempt's response (their `result` stays undefined): they may hold a credential.
 *
 * @example
 * ```ts
 * import { tracingChannel } from 'node:diagnostics_channel';
 * import type { CrmCallContext } from 'crm-integration-sdk';
 *
 * tracingChannel<unknown, CrmCallContext>('crm-integration-sdk:call').subscribe({
 *   start: (call) => console.log('start', call.operation, call.tenantId),
 *   asyncEnd: (call) => console.log('end', call.operation, call.status, call.attempts),
 *   error: (call) => console.log('failed', call.operation, call.error),
 *   end() {}, asyncStart() {},
 * });
 * ```
 */
export interface CrmCallContext {
  /** The SDK method, as `resource.method`: `opportunities.get`, `contacts.list`, ...; `request` for `crm.request()`. */
  readonly operation: string;
  /** The HTTP method: `GET`, `POST`, `PUT`, ... */
  readonly method: string;
  /** The path with its placeholders: `/integrations/v1/opportunities/{id}`. */
  readonly urlTemplate: string;
  /** The tenant the call is for. */
  readonly tenantId: string | undefined;
  /** Once known: the status of the answer the call ended with. */
  status?: number | undefined;
  /** Once known: the server's request id, when it sent one. */
  requestId?: string | undefined;
  /** Once known: how many HTTP attempts were made. */
  attempts?: number | undefined;
  /** Once known: the `CrmError` the call rejects with (set by the channel). */
  error?: unknown;
}

/**
 * What the `crm-integration-sdk:attempt` tracing channel publishes around each HTTP attempt of
 * a call, retries included.
 */
export interface CrmAttemptContext {
  /** The call this attempt belongs to: the same object its own channel published. */
  readonly call: CrmCallContext;
  /** 0 for the first attempt, 1 for the first retry, ... */
  readonly attempt: number;
  /** The HTTP method. */
  readonly method: string;
  /** The full URL, which holds no credential. */
  readonly url: string;
  /**
   * The request's headers, without the credentials. A subscriber to `start` may add headers
   * (such as `traceparent`), which are then sent; it cannot set or replace `x-api-key`,
   * `authorization` or `x-tenant-id`.
   */
  readonly headers: Record<string, string>;
  /** Once known: the answer's status. */
  status?: number | undefined;
  /** Once known: why no answer came (set by the channel), masked like the SDK's errors. */
  error?: unknown;
}
