import { Caller } from './core/caller';
import { Transport } from './core/request';
import { type ClientOptions, checkTenantId, resolveOptions } from './options';
import { Accounts } from './resources/accounts';
import { Activities } from './resources/activities';
import { ApiKeys, Grants } from './resources/admin';
import { Contacts } from './resources/contacts';
import { Opportunities } from './resources/opportunities';

// Handed from withTenant() to the constructor it calls, so the constructor's public signature stays ClientOptions.
let shared: { transport: Transport; tenantId: string; prefetch: number } | undefined;

/**
 * The client of the CRM integration API. One client serves one tenant; `withTenant()` makes
 * clients for others that share its configuration and connections.
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
  readonly opportunities: Opportunities;
  /** Activities of opportunities: `list`, `create`. */
  readonly activities: Activities;
  /** Accounts: `create`, `update`. */
  readonly accounts: Accounts;
  /** Contacts: `create`, `update`, `list`. */
  readonly contacts: Contacts;
  /** Grants: `resolve`. */
  readonly grants: Grants;
  /** The integration API key, with the admin token: `status`, `generate`. */
  readonly apiKey: ApiKeys;
  /** The tenant this client's calls are scoped to (not a secret). */
  readonly tenantId: string | undefined;
  readonly #transport: Transport;
  readonly #prefetch: number;

  /**
   * @param options - Missing `baseUrl`, `apiKey`, `tenantId` and `adminToken` are read from
   * `CRM_BASE_URL`, `CRM_API_KEY`, `CRM_TENANT_ID` and `CRM_ADMIN_TOKEN` where `process.env`
   * exists. Throws `CrmValidationError` when `baseUrl` is missing or any option is invalid;
   * a missing credential is reported by the first call that needs it.
   */
  constructor(options: ClientOptions = {}) {
    if (shared) {
      this.#transport = shared.transport;
      this.tenantId = shared.tenantId;
      this.#prefetch = shared.prefetch;
      shared = undefined;
    } else {
      const resolved = resolveOptions(options);
      this.#transport = new Transport(resolved);
      this.tenantId = resolved.tenantId;
      this.#prefetch = resolved.prefetch;
    }
    const call = new Caller(this.#transport, this.tenantId, this.#prefetch);
    this.opportunities = new Opportunities(call);
    this.activities = new Activities(call);
    this.accounts = new Accounts(call);
    this.contacts = new Contacts(call);
    this.grants = new Grants(call);
    this.apiKey = new ApiKeys(call);
  }

  /**
   * A client for another tenant, sharing this client's configuration, credentials and transport.
   *
   * @example
   * ```ts
   * for (const tenantId of tenants) {
   *   const page = await crm.withTenant(tenantId).contacts.list({ limit: 10 });
   * }
   * ```
   */
  withTenant(tenantId: string): CrmClient {
    shared = { transport: this.#transport, tenantId: checkTenantId(tenantId), prefetch: this.#prefetch };
    return new CrmClient();
  }

  /** Shows the base URL and tenant, never a credential. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CrmClient { baseUrl: '${this.#transport.baseUrl}', tenantId: ${this.tenantId === undefined ? 'undefined' : `'${this.tenantId}'`} }`;
  }

  /** The JSON form shows the base URL and tenant, never a credential. */
  toJSON(): { baseUrl: string; tenantId: string | undefined } {
    return { baseUrl: this.#transport.baseUrl, tenantId: this.tenantId };
  }
}
