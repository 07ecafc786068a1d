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

/** The spec's endpoint table, row by row (numbers are the spec's). */
// biome-ignore format: one line per row, so the table reads like the spec's
export const endpoints = {
  /* 1 */ getOpportunity: defineEndpoint({ method: 'GET', path: `${v1}/opportunities/{id}`, tenantIn: 'query', auth: 'apiKey', data: OpportunitySchema }),
  /* 2 */ createOpportunity: defineEndpoint({ method: 'POST', path: `${v1}/opportunities`, tenantIn: 'body', auth: 'apiKey', body: OpportunityCreateInputSchema, data: OpportunitySchema }),
  /* 3 */ updateOpportunity: defineEndpoint({ method: 'PUT', path: `${v1}/opportunities/{id}`, tenantIn: 'query', auth: 'apiKey', body: OpportunityUpdateInputSchema, data: OpportunitySchema }),
  /* 4 */ listActivities: defineEndpoint({ method: 'GET', path: `${v1}/activities`, tenantIn: 'query', auth: 'apiKey', query: ActivityListParamsSchema, data: ActivitySchema, list: true }),
  /* 5 */ createActivity: defineEndpoint({ method: 'POST', path: `${v1}/activities`, tenantIn: 'body', auth: 'apiKey', body: ActivityCreateInputSchema, data: ActivitySchema }),
  /* 6 */ createAccount: defineEndpoint({ method: 'POST', path: `${v1}/accounts`, tenantIn: 'body', auth: 'apiKey', body: AccountCreateInputSchema, data: AccountSchema }),
  /* 7 */ updateAccount: defineEndpoint({ method: 'PUT', path: `${v1}/accounts/{id}`, tenantIn: 'query', auth: 'apiKey', body: AccountUpdateInputSchema, data: AccountUpdateResultSchema }),
  /* 8 */ createContact: defineEndpoint({ method: 'POST', path: `${v1}/contacts`, tenantIn: 'body', auth: 'apiKey', body: ContactInputSchema, data: ContactSchema }),
  // Row 9: the spec does not say where tenantId goes; the other updates take it in the query.
  /* 9 */ updateContact: defineEndpoint({ method: 'PUT', path: `${v1}/contacts/{id}`, tenantIn: 'query', auth: 'apiKey', body: ContactInputSchema, data: ContactSchema }),
  /* 10 */ listContacts: defineEndpoint({ method: 'GET', path: `${v1}/contacts`, tenantIn: 'query', auth: 'apiKey', query: ContactListParamsSchema, data: ContactSchema, list: true }),
  /* 11 */ resolveGrant: defineEndpoint({ method: 'GET', path: `${v1}/grants/resolve`, tenantIn: 'query', auth: 'apiKey', query: z.strictObject({ grantId: GrantIdSchema }), data: GrantResolutionSchema }),
  /* 12 */ apiKeyStatus: defineEndpoint({ method: 'GET', path: 'integrations/api-key', tenantIn: 'none', auth: 'admin', data: ApiKeyStatusSchema }),
  /* 13 */ generateApiKey: defineEndpoint({ method: 'POST', path: 'integrations/api-key/generate', tenantIn: 'none', auth: 'admin', data: ApiKeyGenerateResultSchema }),
};
