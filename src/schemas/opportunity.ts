import * as z from 'zod/mini';
import { DateTimeInput, NonEmptyString, OpenObject, openEnum, opt } from './common';

/** Values of an opportunity's `type`. */
export const OPPORTUNITY_TYPES = ['new_business', 'existing_business', 'upsell', 'renewal'] as const;

// Optional on create and on update; written out, not z.partial() (PERFORMANCE.md, "zod features left out").
const opportunityFields = {
  ownerId: z.optional(z.string()),
  contactId: z.optional(z.string()),
  amount: z.optional(z.number()),
  probability: z.optional(z.number()),
  stage: z.optional(z.string()),
  pipelineId: z.optional(z.string()),
  pipelineStageId: z.optional(z.string()),
  expectedCloseDate: z.optional(DateTimeInput),
  closeDate: z.optional(DateTimeInput),
  source: z.optional(z.string()),
  type: z.optional(z.enum(OPPORTUNITY_TYPES)),
  description: z.optional(z.string()),
  nextStep: z.optional(z.string()),
};

/** Body of `opportunities.create()`: `name` and `accountId` are required. */
export const OpportunityCreateInputSchema = z.strictObject({
  name: NonEmptyString,
  accountId: NonEmptyString,
  ...opportunityFields,
});

/** Body of `opportunities.update()`: every field is optional. */
export const OpportunityUpdateInputSchema = z.strictObject({
  name: z.optional(z.string()),
  accountId: z.optional(z.string()),
  ...opportunityFields,
});

/** An opportunity as returned by the API. Only `id` is guaranteed; unknown fields are kept. */
export const OpportunitySchema = z.looseObject({
  id: z.string(),
  name: opt(z.string()),
  accountId: opt(z.string()),
  probability: opt(z.number()),
  ownerId: opt(z.string()),
  contactId: opt(z.string()),
  pipelineId: opt(z.string()),
  pipelineStageId: opt(z.string()),
  amount: opt(z.number()),
  expectedCloseDate: opt(z.string()),
  contractStartDate: opt(z.string()),
  closeDate: opt(z.string()),
  source: opt(z.string()),
  type: opt(openEnum(OPPORTUNITY_TYPES)),
  nextStep: opt(z.string()),
  description: opt(z.string()),
  isIntegration: opt(z.boolean()),
  account: opt(z.string()),
  contact: opt(z.string()),
  owner: opt(z.string()),
  activitiesCount: opt(z.number()),
  lastActivityDate: opt(z.string()),
  dsa: opt(z.number()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
  primaryContact: opt(OpenObject),
  associatedContacts: opt(z.array(OpenObject)),
});

/** An opportunity as returned by the API. */
export type Opportunity = z.infer<typeof OpportunitySchema>;
/** What `opportunities.create()` accepts (date-times as `Date` or ISO string). */
export type OpportunityCreateInput = z.input<typeof OpportunityCreateInputSchema>;
/** What `opportunities.update()` accepts: any subset of the create fields. */
export type OpportunityUpdateInput = z.input<typeof OpportunityUpdateInputSchema>;
/** A value of an opportunity's `type`, as sent. */
export type OpportunityType = (typeof OPPORTUNITY_TYPES)[number];
