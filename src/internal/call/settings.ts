import type { CrmLogger } from '../../core/log';
import type { PaceStore } from '../../core/pace-store';
import type { FetchOptions } from '../../options';

/**
 * Everything a call is sent with, resolved once from the client's defaults and the call's own
 * options, and checked (src/internal/request/settings.ts): every step reads only this.
 */
export interface CallSettings {
  readonly timeout: number;
  readonly totalTimeout: number | undefined;
  readonly maxRetries: number;
  readonly maxRetryAfter: number;
  /** The client's headers and the call's, without credential headers. */
  readonly headers: Readonly<Record<string, string>>;
  readonly prefetch: number;
  /** `throttle: 'auto'`: true, or the store of `{ mode: 'auto', store }`; false for 'off'. */
  readonly throttle: boolean | PaceStore;
  readonly signal: AbortSignal | undefined;
  // Optional only so that the built-in defaults need not name them: merge() always sets them.
  readonly extraQuery?: Readonly<Record<string, unknown>> | undefined;
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined;
}

/** The client's options that every call shares, checked, with their defaults. */
export interface TransportOptions {
  readonly baseUrl: string;
  readonly adminToken?: string | undefined;
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly maxConcurrency?: number | undefined;
  readonly maxResponseBytes: number;
  readonly logger?: CrmLogger | undefined;
  readonly validateResponses: boolean;
  /** Merged into every attempt's fetch options. */
  readonly fetchOptions?: FetchOptions | undefined;
  /** The `redactHeaders` option, in lower case. */
  readonly secretHeaders?: ReadonlySet<string> | undefined;
}
