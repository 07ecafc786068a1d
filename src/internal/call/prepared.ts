import type { CrmSideEffects } from '../../core/errors';
import type { ApiKeyProvider } from '../../options';
import type { Pagination } from '../../schemas/pagination';
import type { Endpoint } from '../endpoint/define';
import type { CallSettings } from './settings';

/**
 * One call, checked and built (src/internal/request/prepare.ts): what every attempt sends. It is
 * never changed: the extras of a call and a key its `apiKey` function returned make a new one.
 */
export interface PreparedRequest {
  /** Its row: where the tenant goes (`tenantIn`), which credential it carries (`auth`). */
  readonly endpoint: Endpoint;
  readonly href: string;
  readonly init: {
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly redirect: 'manual';
    readonly body?: string;
  };
  /** `GET /integrations/v1/contacts`, for messages. */
  readonly where: string;
  readonly tenantId: string | undefined;
  readonly settings: CallSettings;
  /** When `totalTimeout` runs out (epoch ms). */
  readonly deadline: number | undefined;
  /** The `apiKey` function that looks this call's key up; the headers have no `x-api-key` until then. */
  readonly keyFrom: ApiKeyProvider | undefined;
}

/** What a call learns on its way, owned by the transport; `CrmPromise` reads `response`. */
export interface CallState {
  /** Attempts sent so far. */
  attempts: number;
  /** The answer the data came from, once it has come. */
  response: Response | undefined;
  /** The envelope's `pagination`, on lists. */
  pagination: Pagination | undefined;
  /**
   * The credentials this call carries, masked wherever its text reaches an error or a log: its
   * client's, and the key an `apiKey` function returned.
   */
  secrets: readonly string[];
  /** `'unknown'` once an attempt may have acted on the server (`CrmError.sideEffects`). */
  sideEffects: CrmSideEffects;
}

/** The key of the call's credential: the pace and the masking are per credential. */
export const credentialOf = ({ init }: PreparedRequest): string =>
  init.headers['x-api-key'] ?? init.headers.authorization ?? '';

/** Key management: the spec does not show its bodies, so errors keep none of a body's text. */
export const keepsNoBody = (request: PreparedRequest): boolean => request.endpoint.auth === 'admin';
