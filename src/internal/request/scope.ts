import type * as z from 'zod/mini';
import { CrmPromise } from '../../core/crm-promise';
import { CrmValidationError } from '../../core/errors';
import { Page, PagePromise } from '../../core/page';
import type { ApiKeyProvider, ListOptions, RequestOptions } from '../../options';
import type { CallState } from '../call/prepared';
import type { CallSettings } from '../call/settings';
import type { Endpoint, EndpointInput } from '../endpoint/define';
import { adHocCall, adHocQuery } from '../hatches/ad-hoc';
import { prepare, type Sender } from './prepare';
import { settingsFor } from './settings';
import type { Transport } from './transport';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/** What a derived scope changes; the rest comes from its parent. */
interface Derivation {
  readonly tenantId?: string | undefined;
  readonly apiKey?: string | ApiKeyProvider | undefined;
  readonly defaults?: CallSettings | undefined;
}

type Auth = Endpoint['auth'];

/**
 * What a client's calls are made as: its tenant, its API key, its call defaults, and the
 * transport it shares with every client derived from the same `new CrmClient()`. The resources
 * hold one and hand it their calls (`one()`, `list()`), which it checks and prepares, hands to
 * the transport, and whose results it wraps in the promise types methods return.
 */
export class Scope implements Sender {
  declare readonly transport: Transport;
  declare readonly base: string;
  declare readonly tenantId: string | undefined;
  /** A key, a function that looks one up per call, or undefined (the first call that needs one says so). */
  declare readonly apiKey: string | ApiKeyProvider | undefined;
  declare readonly keyFrom: ApiKeyProvider | undefined;
  declare readonly defaults: CallSettings;
  /** The credentials this scope knows of, masked wherever server text reaches an error or a log. */
  declare readonly secrets: readonly string[];
  /** The headers of a call with the default settings, per kind of auth: the same object for every such call. */
  readonly #headers: Partial<Record<Auth, Readonly<Record<string, string>>>> = {};

  constructor(
    transport: Transport,
    tenantId: string | undefined,
    apiKey: string | ApiKeyProvider | undefined,
    defaults: CallSettings,
    secrets: readonly string[],
  ) {
    this.transport = transport;
    this.base = transport.base;
    this.tenantId = tenantId;
    this.apiKey = apiKey;
    this.keyFrom = typeof apiKey === 'function' ? apiKey : undefined;
    this.defaults = defaults;
    this.secrets = typeof apiKey === 'string' && !secrets.includes(apiKey) ? [...secrets, apiKey] : secrets;
  }

  /** A scope like this one, with another tenant, key or defaults, sharing the transport. */
  derive({ tenantId = this.tenantId, apiKey = this.apiKey, defaults = this.defaults }: Derivation): Scope {
    return new Scope(this.transport, tenantId, apiKey, defaults, this.secrets);
  }

  /**
   * The headers of a call: the client's, the call's, and the credentials its endpoint needs
   * (without `x-api-key` when a function looks the key up). Throws when a credential is missing.
   */
  headersFor(auth: Auth, settings: CallSettings): Readonly<Record<string, string>> {
    const usual = settings.headers === this.defaults.headers;
    const cached = usual ? this.#headers[auth] : undefined;
    if (cached) return cached;
    const headers = { accept: 'application/json', ...settings.headers, ...this.#credentials(auth) };
    if (usual) this.#headers[auth] = headers;
    return headers;
  }

  #credentials(auth: Auth): Record<string, string> {
    const { apiKey, tenantId } = this;
    if (auth === 'admin') {
      const token = this.transport.options.adminToken;
      if (!token) throw missing('adminToken', 'CRM_ADMIN_TOKEN');
      return { authorization: `Bearer ${token}` };
    }
    if (!apiKey) throw missing('apiKey', 'CRM_API_KEY');
    if (!tenantId) throw missing('tenantId', 'CRM_TENANT_ID');
    return typeof apiKey === 'string' ? { 'x-api-key': apiKey, 'x-tenant-id': tenantId } : { 'x-tenant-id': tenantId };
  }

  /** A call that returns one record (or object). */
  one<E extends Endpoint>(
    endpoint: E,
    input: EndpointInput<E>,
    options?: RequestOptions,
  ): CrmPromise<z.output<E['data']>> {
    try {
      const settings = settingsFor(this.defaults, options, 'request');
      const request = prepare(endpoint, input, settings, this.headersFor(endpoint.auth, settings), this);
      const state = this.#state();
      return new CrmPromise(this.transport.send(request, state) as Promise<z.output<E['data']>>, state);
    } catch (error) {
      // Bad options, bad input, a missing credential: nothing was sent.
      return new CrmPromise(Promise.reject(error), NOTHING);
    }
  }

  /** A call that returns a page, and whatever iterating it needs to ask for the next ones. */
  list<E extends Endpoint<z.ZodMiniType, undefined, z.ZodMiniType<{ id: string }>>>(
    endpoint: E,
    query: { page?: number | undefined; limit?: number | undefined } & EndpointInput<E>['query'],
    options?: ListOptions,
  ): PagePromise<z.output<E['data']>> {
    type Item = z.output<E['data']>;
    let settings: CallSettings | undefined;
    // Read before validation, so a caller's null or non-object must not throw here: the request path reports it.
    const given: { page?: unknown; limit?: unknown } = typeof query === 'object' && query !== null ? query : {};
    const limit = typeof given.limit === 'number' ? given.limit : undefined;
    // The first request sends the caller's parameters as given; later ones add `page`, and
    // pages fetched ahead a signal of their own, to be cancelled when the loop ends.
    const fetchPage = (
      page: number,
      signal?: AbortSignal,
      pageQuery: object = { ...query, page },
    ): PagePromise<Item> => {
      try {
        settings ??= settingsFor(this.defaults, options, 'list');
        const { prefetch, signal: own } = settings;
        const pageSettings = signal ? { ...settings, signal: own ? AbortSignal.any([own, signal]) : signal } : settings;
        const headers = this.headersFor(endpoint.auth, pageSettings);
        const request = prepare(endpoint, { query: pageQuery }, pageSettings, headers, this);
        const state = this.#state();
        const result = this.transport.send(request, state).then(
          (data) =>
            new Page<Item>(data as Item[], state.pagination ?? {}, {
              number: page,
              limit,
              prefetch,
              fetch: fetchPage,
            }),
        );
        return new PagePromise(result, state);
      } catch (error) {
        return new PagePromise(Promise.reject(error), NOTHING);
      }
    };
    return fetchPage(typeof given.page === 'number' ? given.page : 1, undefined, query);
  }

  /**
   * `crm.request()`: a call to an endpoint the SDK does not describe, checked, built and sent like
   * any other. Its query goes where an `extraQuery` goes, the call's own `extraQuery` over it.
   */
  request<T>(given: unknown, options: RequestOptions | undefined): CrmPromise<T> {
    const state = this.#state();
    // An async function, so that a failure's stack leads to the caller (src/internal/README.md, "Stacks").
    const run = async () => {
      const checked = settingsFor(this.defaults, options, 'request');
      const { endpoint, body, query } = adHocCall(given);
      const extraQuery = adHocQuery(query, checked.extraQuery);
      const settings = extraQuery === checked.extraQuery ? checked : { ...checked, extraQuery };
      const request = prepare(endpoint, { body }, settings, this.headersFor('apiKey', settings), this);
      return await this.transport.send(request, state);
    };
    return new CrmPromise(run() as Promise<T>, state);
  }

  #state(): CallState {
    return { attempts: 0, response: undefined, pagination: undefined, secrets: this.secrets, sideEffects: 'none' };
  }
}

/** The reply of a call that was never sent. */
const NOTHING = { response: undefined };

function missing(field: string, variable: string): CrmValidationError {
  return new CrmValidationError(
    [{ field, path: [field], message: `Required for this call: pass ${field} to new CrmClient() or set ${variable}` }],
    'Missing credential',
  );
}
