import type { ApiKeyProvider, CallSettings } from '../options';
import type { Pagination } from '../schemas/pagination';
import type { Pacer, Ticket } from './pacer';
import type { Scope } from './scope';
import type { CallTrace } from './tracing';

/**
 * One call, checked and built by `Transport.prepare()`: every attempt sends exactly this. It
 * also carries what the call learns on its way (attempts made, the response), so that nothing
 * else is allocated per call.
 */
export interface PreparedCall {
  /** The URL; `extraQuery` is added to it once checked. */
  href: string;
  readonly init: { method: string; headers: Readonly<Record<string, string>>; redirect: 'manual'; body?: string };
  /** `GET /integrations/v1/contacts`, for messages. */
  readonly where: string;
  readonly settings: CallSettings;
  /** The client it was made by: its tenant, its key, the credentials it masks. */
  readonly scope: Scope;
  /** When `totalTimeout` runs out (epoch ms). */
  readonly deadline: number | undefined;
  /**
   * The credentials this call carries, masked wherever its text reaches an error or a log: its
   * scope's, and the key an `apiKey` function returned. (The reporter adds the values of the
   * headers masked by name.)
   */
  secrets: readonly string[];
  /**
   * Key management: the spec does not show its bodies, so no field can be known to hold the
   * key, and errors keep none of a body's text.
   */
  readonly secretBody: boolean;
  /** The `apiKey` function that looks this call's key up; the headers have no `x-api-key` until then. */
  readonly keyFrom: ApiKeyProvider | undefined;
  /** Attempts sent so far. */
  attempts: number;
  /** The answer the data came from, once it has come. */
  response: Response | undefined;
  /** The envelope's `pagination`, on lists. */
  pagination: Pagination | undefined;
  /** Set when the call is published on the tracing channels: its attempts publish themselves through it. */
  trace?: CallTrace | undefined;
  /** With `throttle: 'auto'`: the pace of the call's credential, and the turn its latest attempt took. */
  pacer?: Pacer | undefined;
  ticket?: Ticket | undefined;
}
