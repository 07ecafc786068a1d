import type { CrmPromise } from '../core/crm-promise';
import { endpoints } from '../endpoints';
import type { Scope } from '../internal/request/scope';
import type { RequestOptions } from '../options';
import type { Opportunity, OpportunityCreateInput, OpportunityUpdateInput } from '../schemas/opportunity';

/** `crm.opportunities`: read, create and update opportunities. */
export class Opportunities {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Reads one opportunity (`GET /integrations/v1/opportunities/{id}`).
   *
   * @example
   * ```ts
   * const opportunity = await crm.opportunities.get('opp_123');
   * console.log(opportunity.name, opportunity.amount);
   * ```
   */
  get(id: string, options?: RequestOptions): CrmPromise<Opportunity> {
    return this.#scope.one(endpoints.getOpportunity, { path: { id } }, options);
  }

  /**
   * Creates an opportunity (`POST /integrations/v1/opportunities`). Not retried unless the
   * server proves it did not act (429, or 503 with `Retry-After`).
   *
   * @example
   * ```ts
   * const opportunity = await crm.opportunities.create({
   *   name: 'Renewal 2027', accountId: 'acc_1', amount: 12000, expectedCloseDate: new Date('2027-01-31'),
   * });
   * ```
   */
  create(input: OpportunityCreateInput, options?: RequestOptions): CrmPromise<Opportunity> {
    return this.#scope.one(endpoints.createOpportunity, { body: input }, options);
  }

  /**
   * Updates an opportunity (`PUT /integrations/v1/opportunities/{id}`); send only what changes.
   *
   * @example
   * ```ts
   * await crm.opportunities.update('opp_123', { stage: 'negotiation', probability: 60 });
   * ```
   */
  update(id: string, input: OpportunityUpdateInput, options?: RequestOptions): CrmPromise<Opportunity> {
    return this.#scope.one(endpoints.updateOpportunity, { path: { id }, body: input }, options);
  }
}
