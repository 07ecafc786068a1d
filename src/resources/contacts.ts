import type { CrmPromise } from '../core/crm-promise';
import type { PagePromise } from '../core/page';
import { endpoints } from '../endpoints';
import type { Scope } from '../internal/request/scope';
import type { ListOptions, RequestOptions } from '../options';
import type { Contact, ContactCreateInput, ContactListParams, ContactUpdateInput } from '../schemas/contact';

/** `crm.contacts`: create, update and list contacts. */
export class Contacts {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Creates a contact (`POST /integrations/v1/contacts`).
   *
   * @example
   * ```ts
   * const contact = await crm.contacts.create({ accountId: 'acc_1', firstName: 'Ada', email: 'ada@example.com' });
   * ```
   */
  create(input: ContactCreateInput, options?: RequestOptions): CrmPromise<Contact> {
    return this.#scope.one(endpoints.createContact, { body: input }, options);
  }

  /**
   * Updates a contact (`PUT /integrations/v1/contacts/{id}`). The tenant goes in the query, as
   * for the other updates (the spec does not say).
   *
   * @example
   * ```ts
   * await crm.contacts.update('con_1', { position: 'CTO' });
   * ```
   */
  update(id: string, input: ContactUpdateInput, options?: RequestOptions): CrmPromise<Contact> {
    return this.#scope.one(endpoints.updateContact, { path: { id }, body: input }, options);
  }

  /**
   * Lists contacts (`GET /integrations/v1/contacts`). Await it for one page, or `for await` it
   * for every contact.
   *
   * @example
   * ```ts
   * const page = await crm.contacts.list({ limit: 50 });
   * for await (const contact of crm.contacts.list({ status: 'active' })) console.log(contact.email);
   * ```
   */
  list(params: ContactListParams = {}, options?: ListOptions): PagePromise<Contact> {
    return this.#scope.list(endpoints.listContacts, params, options);
  }
}
