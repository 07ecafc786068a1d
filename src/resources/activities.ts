import type { CrmPromise } from '../core/crm-promise';
import type { PagePromise } from '../core/page';
import { endpoints } from '../endpoints';
import type { Scope } from '../internal/request/scope';
import type { ListOptions, RequestOptions } from '../options';
import type { Activity, ActivityCreateInput, ActivityListParams } from '../schemas/activity';

/** `crm.activities`: list and log the activities of an opportunity. */
export class Activities {
  readonly #scope: Scope;

  /** @internal */
  constructor(scope: Scope) {
    this.#scope = scope;
  }

  /**
   * Lists the activities of an opportunity (`GET /integrations/v1/activities`). Await it for
   * one page, or `for await` it for every activity.
   *
   * @example
   * ```ts
   * for await (const activity of crm.activities.list({ opportunityId: 'opp_123', type: 'call' })) {
   *   console.log(activity.activityDate, activity.subject);
   * }
   * ```
   */
  list(params: ActivityListParams, options?: ListOptions): PagePromise<Activity> {
    return this.#scope.list(endpoints.listActivities, params, options);
  }

  /**
   * Logs an activity on an opportunity (`POST /integrations/v1/activities`). `opportunityId`
   * is sent as `relatedToType: "opportunity"` and `relatedToId`.
   *
   * @example
   * ```ts
   * await crm.activities.create({ opportunityId: 'opp_123', type: 'call', subject: 'Discovery call' });
   * ```
   */
  create(input: ActivityCreateInput, options?: RequestOptions): CrmPromise<Activity> {
    return this.#scope.one(endpoints.createActivity, { body: input }, options);
  }
}
