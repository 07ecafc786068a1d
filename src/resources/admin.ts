import type { CrmPromise } from '../core/crm-promise';
import { endpoints } from '../endpoints';
import type { Scope } from '../internal/request/scope';
import type { RequestOptions } from '../options';
import type { ApiKeyGenerateResult, ApiKeyStatus, GrantResolution } from '../schemas/admin';

/** `crm.grants`: grant resolution. */
export class Grants {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Resolves a grant (`GET /integrations/v1/grants/resolve?grantId=…`). The spec does not show
   * the result's fields, so it is an open object.
   *
   * @example
   * ```ts
   * const grant = await crm.grants.resolve('grant_42');
   * ```
   */
  resolve(grantId: string, options?: RequestOptions): CrmPromise<GrantResolution> {
    return this.#scope.one(endpoints.resolveGrant, { query: { grantId } }, options);
  }
}

/** `crm.apiKey`: key management, with the administrator's bearer token (`adminToken`). */
export class ApiKeys {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Reads the state of the tenant's integration API key (`GET /integrations/api-key`).
   *
   * @example
   * ```ts
   * const admin = new CrmClient({ baseUrl, adminToken });
   * console.log(await admin.apiKey.status());
   * ```
   */
  status(options?: RequestOptions): CrmPromise<ApiKeyStatus> {
    return this.#scope.one(endpoints.apiKeyStatus, {}, options);
  }

  /**
   * Generates or rotates the tenant's integration API key (`POST /integrations/api-key/generate`).
   * The new key is returned to the caller and kept nowhere else; whether the previous key stops
   * working is up to the server.
   *
   * @example
   * ```ts
   * const result = await admin.apiKey.generate();
   * ```
   */
  generate(options?: RequestOptions): CrmPromise<ApiKeyGenerateResult> {
    return this.#scope.one(endpoints.generateApiKey, {}, options);
  }
}
