import type { CrmPromise } from '../core/crm-promise';
import { endpoints } from '../endpoints';
import type { Scope } from '../internal/request/scope';
import type { RequestOptions } from '../options';
import type { Account, AccountCreateInput, AccountUpdateInput, AccountUpdateResult } from '../schemas/account';

/** `crm.accounts`: create and update accounts. */
export class Accounts {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Creates an account (`POST /integrations/v1/accounts`).
   *
   * @example
   * ```ts
   * const account = await crm.accounts.create({ name: 'Acme Ltd', status: 'prospect', country: 'GB' });
   * ```
   */
  create(input: AccountCreateInput, options?: RequestOptions): CrmPromise<Account> {
    return this.#scope.one(endpoints.createAccount, { body: input }, options);
  }

  /**
   * Updates an account (`PUT /integrations/v1/accounts/{id}`). The spec does not show the
   * result's fields, so it is an open object.
   *
   * @example
   * ```ts
   * await crm.accounts.update('acc_1', { status: 'active' });
   * ```
   */
  update(id: string, input: AccountUpdateInput, options?: RequestOptions): CrmPromise<AccountUpdateResult> {
    return this.#scope.one(endpoints.updateAccount, { path: { id }, body: input }, options);
  }
}
