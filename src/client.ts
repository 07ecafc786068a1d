import type { CrmPromise } from './core/crm-promise';
import type { CrmRequest } from './core/request';
import { passesGates } from './internal/call/unsent';
import { Scope } from './internal/request/scope';
import { checkTenant, resolveOptions, withDefaults } from './internal/request/settings';
import { Transport } from './internal/request/transport';
import { type ClientPacers, PACE_MEMORY } from './internal/waiting/pace-memory';
import type { ClientDefaults, ClientOptions, RequestOptions, TenantOptions } from './options';
import { Accounts } from './resources/accounts';
import { Activities } from './resources/activities';
import { ApiKeys, Grants } from './resources/admin';
import { Contacts } from './resources/contacts';
import { Opportunities } from './resources/opportunities';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/**
 * Where `withTenant()` and `withOptions()` hand the constructor the scope of the client they
 * derive. Module-private, so only they can; the constructor's public signature stays ClientOptions.
 */
const DERIVED = Symbol('derived scope');

/**
 * The client of the CRM integration API. One client serves one tenant; `withTenant()` and
 * `withOptions()` derive clients for other tenants or with other defaults, which share its
 * connections, `maxConcurrency` slots, logger and every other setting.
 *
 * @example
 * ```ts
 * import { CrmClient } from 'crm-integration-sdk';
 *
 * const crm = new CrmClient({ baseUrl: 'https://crm.example.com', apiKey, tenantId: 'acme' });
 * const opportunity = await crm.opportunities.get('opp_123');
 * ```
 */
export class CrmClient {
  /** Opportunities: `get`, `create`, `update`. */
  declare readonly opportunities: Opportunities;
  /** Activities of opportunities: `list`, `create`. */
  declare readonly activities: Activities;
  /** Accounts: `create`, `update`. */
  declare readonly accounts: Accounts;
  /** Contacts: `create`, `update`, `list`. */
  declare readonly contacts: Contacts;
  /** Grants: `resolve`. */
  declare readonly grants: Grants;
  /** The integration API key, with the admin token: `status`, `generate`. */
  declare readonly apiKey: ApiKeys;
  /** The tenant this client's calls are scoped to (not a secret). */
  declare readonly tenantId: string | undefined;
  readonly #scope: Scope;

  /**
   * @param options - Missing `baseUrl`, `apiKey`, `tenantId` and `adminToken` are read from
   * `CRM_BASE_URL`, `CRM_API_KEY`, `CRM_TENANT_ID` and `CRM_ADMIN_TOKEN` where `process.env`
   * exists. Throws `CrmValidationError` when `options` is not an object, `baseUrl` is missing, or
   * any option is unknown or invalid; a missing credential is reported by the first call that needs it.
   */
  constructor(options: ClientOptions = {}) {
    let scope = (options as { [DERIVED]?: Scope } | null)?.[DERIVED];
    if (!scope) {
      const resolved = resolveOptions(options);
      const { adminToken } = resolved.transport;
      scope = new Scope(
        new Transport(resolved.transport),
        resolved.tenantId,
        resolved.apiKey,
        resolved.defaults,
        adminToken ? [adminToken] : [],
      );
    }
    this.#scope = scope;
    // In the order the fields are declared: the order Object.keys() and inspect() show them in.
    this.opportunities = new Opportunities(scope);
    this.activities = new Activities(scope);
    this.accounts = new Accounts(scope);
    this.contacts = new Contacts(scope);
    this.grants = new Grants(scope);
    this.apiKey = new ApiKeys(scope);
    this.tenantId = scope.tenantId;
  }

  /**
   * A client for another tenant. It sends `options.apiKey` when given (a key, or a function of
   * the tenant that returns one), else this client's key; it shares this client's connections,
   * `maxConcurrency` slots, logger, defaults and every other setting. Throws
   * `CrmValidationError` for an invalid tenant or key.
   *
   * @example
   * ```ts
   * for (const { tenantId, apiKey } of tenants) {
   *   const page = await crm.withTenant(tenantId, { apiKey }).contacts.list({ limit: 10 });
   * }
   * ```
   */
  withTenant(tenantId: string, options?: TenantOptions): CrmClient {
    return this.#derive(checkTenant(tenantId, options, this.#scope.defaults));
  }

  /**
   * A client with other defaults (`timeout`, `totalTimeout`, `maxRetries`, `maxRetryAfter`,
   * `headers`, `prefetch`, `throttle`, `signal`) over this client's; `headers` add to this
   * client's, and a `signal` stops its calls as this client's does too. It shares the
   * tenant, the credentials, the connections and everything else. Throws `CrmValidationError`
   * for an unknown or invalid option.
   *
   * @example
   * ```ts
   * const nightly = crm.withOptions({ timeout: 120_000, headers: { 'x-job': 'nightly-export' } });
   * for await (const contact of nightly.contacts.list()) write(contact);
   * ```
   */
  withOptions(options: ClientDefaults): CrmClient {
    return this.#derive({ defaults: withDefaults(this.#scope.defaults, options) });
  }

  /**
   * Calls an endpoint the SDK does not describe (yet), such as one a new server release added,
   * with everything the described ones get: this client's credentials and tenant (`tenantIn`
   * says where `tenantId` goes; `x-tenant-id` is always sent), the envelope unwrapped, retries
   * (a POST's and a PATCH's only where the server proves it did not act), timeouts, errors,
   * logging and masking. Resolves to the envelope's `data`, unchecked: name its type with `T`.
   * Rejects with `CrmValidationError`, sending nothing, for a path that is a URL or has `..`
   * segments, or a `tenantId` in `query` or `body`.
   *
   * @example
   * ```ts
   * const widgets = await crm.request<{ id: string }[]>({ method: 'GET', path: 'integrations/v1/widgets', query: { limit: 10 } });
   * ```
   */
  request<T = unknown>(request: CrmRequest, options?: RequestOptions): CrmPromise<T> {
    return this.#scope.request<T>(request, options);
  }

  #derive(change: Parameters<Scope['derive']>[0]): CrmClient {
    return new CrmClient({ [DERIVED]: this.#scope.derive(change) } as ClientOptions);
  }

  /** @internal What `CrmSync` reads and seeds of the pace between runs (src/internal/waiting/pace-memory.ts). */
  [PACE_MEMORY](): ClientPacers {
    const { transport, apiKey } = this.#scope;
    // The pacer of this client's own key only, where it has one: a transport shared by derived
    // clients paces other tenants' keys too, and a tenant's journal keeps nothing of another's.
    return { memory: transport.paceMemory, only: typeof apiKey === 'string' ? apiKey : undefined };
  }

  /** Shows the base URL and tenant, never a credential. */
  [Symbol.for('nodejs.util.inspect.custom')](
    _depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `CrmClient ${inspect(this.toJSON(), options)}`;
  }

  /** The JSON form shows the base URL and tenant, never a credential. */
  toJSON(): { baseUrl: string; tenantId: string | undefined } {
    return { baseUrl: this.#scope.transport.options.baseUrl, tenantId: this.tenantId };
  }
}

// The sync's creates write their intents at the gate this client's transport passes.
passesGates(CrmClient.prototype);
