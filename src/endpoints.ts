import * as z from 'zod/mini';
import { defineEndpoint } from './internal/endpoint/define';
import {
  AccountCreateInputSchema,
  AccountSchema,
  AccountUpdateInputSchema,
  AccountUpdateResultSchema,
} from './schemas/account';
import { ActivityCreateInputSchema, ActivityListParamsSchema, ActivitySchema } from './schemas/activity';
import { ApiKeyGenerateResultSchema, ApiKeyStatusSchema, GrantIdSchema, GrantResolutionSchema } from './schemas/admin';
import { ContactInputSchema, ContactListParamsSchema, ContactSchema } from './schemas/contact';
import { OpportunityCreateInputSchema, OpportunitySchema, OpportunityUpdateInputSchema } from './schemas/opportunity';

const v1 = 'integrations/v1';

/**
 * The spec's endpoint table, row by row (numbers are the spec's). Each row's TSDoc is its summary
 * in the spec's words: the CLI's help, the OpenAPI summary and the MCP tool's description take it
 * from there (`npm run generate`), so that the SDK's bundle does not carry them.
 */
// biome-ignore format: one line per row, so the table reads like the spec's
export const endpoints = {
  /** Reads an opportunity by id. */
  /* 1 */ getOpportunity: defineEndpoint({ sdkMethod: 'opportunities.get', method: 'GET', path: `${v1}/opportunities/{id}`, tenantIn: 'query', auth: 'apiKey', data: OpportunitySchema }),
  /** Creates an opportunity. */
  /* 2 */ createOpportunity: defineEndpoint({ sdkMethod: 'opportunities.create', method: 'POST', path: `${v1}/opportunities`, tenantIn: 'body', auth: 'apiKey', body: OpportunityCreateInputSchema, data: OpportunitySchema }),
  /** Updates an opportunity; every field is optional. */
  /* 3 */ updateOpportunity: defineEndpoint({ sdkMethod: 'opportunities.update', method: 'PUT', path: `${v1}/opportunities/{id}`, tenantIn: 'query', auth: 'apiKey', body: OpportunityUpdateInputSchema, data: OpportunitySchema }),
  /** Lists the activities of an opportunity, a page at a time. */
  /* 4 */ listActivities: defineEndpoint({ sdkMethod: 'activities.list', method: 'GET', path: `${v1}/activities`, tenantIn: 'query', auth: 'apiKey', query: ActivityListParamsSchema, data: ActivitySchema, list: true }),
  /** Creates an activity; integrations relate it to an opportunity. */
  // Row 5: the SDK's `opportunityId` is sent as relatedToType: 'opportunity' and relatedToId.
  /* 5 */ createActivity: defineEndpoint({ sdkMethod: 'activities.create', method: 'POST', path: `${v1}/activities`, tenantIn: 'body', auth: 'apiKey', body: ActivityCreateInputSchema, data: ActivitySchema, spec: { sdkOnly: ['opportunityId'] } }),
  /** Creates an account. */
  /* 6 */ createAccount: defineEndpoint({ sdkMethod: 'accounts.create', method: 'POST', path: `${v1}/accounts`, tenantIn: 'body', auth: 'apiKey', body: AccountCreateInputSchema, data: AccountSchema }),
  /** Updates an account; every field is optional. The result's fields are not shown by the spec. */
  /* 7 */ updateAccount: defineEndpoint({ sdkMethod: 'accounts.update', method: 'PUT', path: `${v1}/accounts/{id}`, tenantIn: 'query', auth: 'apiKey', body: AccountUpdateInputSchema, data: AccountUpdateResultSchema }),
  /** Creates a contact. */
  /* 8 */ createContact: defineEndpoint({ sdkMethod: 'contacts.create', method: 'POST', path: `${v1}/contacts`, tenantIn: 'body', auth: 'apiKey', body: ContactInputSchema, data: ContactSchema }),
  // Row 9: the spec does not say where tenantId goes ("see note"); the other updates take it in the query.
  /** Updates a contact. */
  /* 9 */ updateContact: defineEndpoint({ sdkMethod: 'contacts.update', method: 'PUT', path: `${v1}/contacts/{id}`, tenantIn: 'query', auth: 'apiKey', body: ContactInputSchema, data: ContactSchema, spec: { optional: ['tenantId'] } }),
  /** Lists contacts, a page at a time, optionally by status. */
  // Rows 10 and 11: the spec's table says "query", not "query, required", of the tenant (10) and of grantId (11).
  /* 10 */ listContacts: defineEndpoint({ sdkMethod: 'contacts.list', method: 'GET', path: `${v1}/contacts`, tenantIn: 'query', auth: 'apiKey', query: ContactListParamsSchema, data: ContactSchema, list: true, spec: { optional: ['tenantId'] } }),
  /** Resolves a grant by its grantId. The result's fields are not shown by the spec. */
  /* 11 */ resolveGrant: defineEndpoint({ sdkMethod: 'grants.resolve', method: 'GET', path: `${v1}/grants/resolve`, tenantIn: 'query', auth: 'apiKey', query: z.strictObject({ grantId: GrantIdSchema }), data: GrantResolutionSchema, spec: { optional: ['grantId'] } }),
  /** Reads the state of the tenant's integration API key (administrator token). */
  /* 12 */ apiKeyStatus: defineEndpoint({ sdkMethod: 'apiKey.status', method: 'GET', path: 'integrations/api-key', tenantIn: 'none', auth: 'admin', data: ApiKeyStatusSchema }),
  /** Generates or rotates the tenant's integration API key (administrator token). */
  /* 13 */ generateApiKey: defineEndpoint({ sdkMethod: 'apiKey.generate', method: 'POST', path: 'integrations/api-key/generate', tenantIn: 'none', auth: 'admin', data: ApiKeyGenerateResultSchema }),
};
