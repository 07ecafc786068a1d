export { CrmClient } from './client';
export { CrmPromise, type WithResponse } from './core/crm-promise';
export {
  CrmAbortError,
  CrmApiError,
  CrmAuthenticationError,
  CrmBadRequestError,
  CrmConflictError,
  CrmConnectionError,
  CrmError,
  type CrmErrorOptions,
  CrmNotFoundError,
  CrmPermissionDeniedError,
  CrmRateLimitError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmServerError,
  type CrmSideEffects,
  CrmTimeoutError,
  CrmUnprocessableEntityError,
  CrmValidationError,
  type CrmValidationIssue,
  isCrmAbortError,
  isCrmApiError,
  isCrmConnectionError,
  isCrmError,
  isCrmResponseTooLargeError,
  isCrmResponseValidationError,
  isCrmTimeoutError,
  isCrmValidationError,
  type ResponseFacts,
} from './core/errors';
export type { CrmLogger, CrmRequestLog } from './core/log';
export type { PaceLearned, PaceLease, PaceReservation, PaceStore } from './core/pace-store';
export { Page, PagePromise } from './core/page';
export type { CrmRequest } from './core/request';
export type { CrmAttemptContext, CrmCallContext } from './core/trace';
export type {
  ApiKeyContext,
  ApiKeyProvider,
  AppInfo,
  ClientDefaults,
  ClientOptions,
  FetchOptions,
  ListOptions,
  RequestOptions,
  TenantOptions,
  ThrottleOptions,
} from './options';
export type { Accounts } from './resources/accounts';
export type { Activities } from './resources/activities';
export type { ApiKeys, Grants } from './resources/admin';
export type { Contacts } from './resources/contacts';
export type { Opportunities } from './resources/opportunities';
export {
  ACCOUNT_STATUSES,
  type Account,
  type AccountCreateInput,
  AccountCreateInputSchema,
  AccountSchema,
  type AccountStatus,
  type AccountUpdateInput,
  AccountUpdateInputSchema,
  type AccountUpdateResult,
  AccountUpdateResultSchema,
} from './schemas/account';
export {
  ACTIVITY_TYPES,
  type Activity,
  type ActivityCreateInput,
  ActivityCreateInputSchema,
  type ActivityListParams,
  ActivityListParamsSchema,
  type ActivityRelatedToType,
  ActivitySchema,
  type ActivityType,
  RELATED_TO_TYPES,
} from './schemas/activity';
export {
  type ApiKeyGenerateResult,
  ApiKeyGenerateResultSchema,
  type ApiKeyStatus,
  ApiKeyStatusSchema,
  type GrantResolution,
  GrantResolutionSchema,
} from './schemas/admin';
export type { OpenEnumValue, WithUnknownFields } from './schemas/common';
export {
  CONTACT_STATUSES,
  type Contact,
  type ContactCreateInput,
  ContactCreateInputSchema,
  ContactInputSchema,
  type ContactListParams,
  ContactListParamsSchema,
  ContactSchema,
  type ContactStatus,
  type ContactUpdateInput,
} from './schemas/contact';
export type { NamedObject, NamedPipe } from './schemas/named';
export {
  OPPORTUNITY_TYPES,
  type Opportunity,
  type OpportunityCreateInput,
  OpportunityCreateInputSchema,
  OpportunitySchema,
  type OpportunityType,
  type OpportunityUpdateInput,
  OpportunityUpdateInputSchema,
} from './schemas/opportunity';
export { type Pagination, PaginationSchema } from './schemas/pagination';
