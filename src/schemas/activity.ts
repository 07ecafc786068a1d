import * as z from 'zod/mini';
import { maxLength } from '../internal/length';
import { DateTimeInput, NonEmptyString, openEnum, opt } from './common';
import { PageParams } from './pagination';

/** Values of an activity's `type`. */
export const ACTIVITY_TYPES = ['call', 'meeting', 'email', 'task', 'note', 'whatsapp'] as const;
/** Values of an activity's `relatedToType`. */
export const RELATED_TO_TYPES = ['account', 'contact', 'opportunity'] as const;

/** The fields of `activities.create()`, before `opportunityId` becomes `relatedToType` + `relatedToId`. */
const ActivityCreateFields = z
  .strictObject({
    opportunityId: z.optional(NonEmptyString),
    relatedToType: z.optional(z.enum(RELATED_TO_TYPES)),
    relatedToId: z.optional(NonEmptyString),
    type: z.enum(ACTIVITY_TYPES),
    subject: NonEmptyString.check(maxLength(255)),
    ownerId: z.optional(NonEmptyString),
    description: z.optional(z.string().check(maxLength(2000))),
    activityDate: z.optional(DateTimeInput),
  })
  .check(
    z.superRefine((input, ctx) => {
      const explicit = input.relatedToType !== undefined || input.relatedToId !== undefined;
      if (input.opportunityId !== undefined && explicit) {
        ctx.addIssue({
          code: 'custom',
          path: ['opportunityId'],
          message: 'Pass either opportunityId or relatedToType + relatedToId, not both',
        });
      } else if (input.opportunityId === undefined && !explicit) {
        ctx.addIssue({
          code: 'custom',
          path: ['opportunityId'],
          message: 'Required: the opportunity the activity belongs to (or relatedToType + relatedToId)',
        });
      } else if (explicit) {
        for (const key of ['relatedToType', 'relatedToId'] as const) {
          if (input[key] === undefined) {
            ctx.addIssue({ code: 'custom', path: [key], message: 'Required together with the other relatedTo field' });
          }
        }
      }
    }),
  );

/**
 * Body of `activities.create()`. The integration flow names the opportunity with
 * `opportunityId`, sent as `relatedToType: "opportunity"` and `relatedToId`; an explicit
 * `relatedToType` + `relatedToId` pair is accepted instead.
 */
export const ActivityCreateInputSchema = z.pipe(
  ActivityCreateFields,
  z.transform(({ opportunityId, relatedToType, relatedToId, ...rest }: z.output<typeof ActivityCreateFields>) =>
    opportunityId === undefined
      ? { relatedToType, relatedToId, ...rest }
      : { relatedToType: 'opportunity' as const, relatedToId: opportunityId, ...rest },
  ),
);

/** Query of `activities.list()`: `opportunityId` is required. */
export const ActivityListParamsSchema = z.strictObject({
  opportunityId: NonEmptyString,
  ...PageParams,
  ownerId: z.optional(z.string()),
  type: z.optional(z.enum(ACTIVITY_TYPES)),
  fromDate: z.optional(DateTimeInput),
  toDate: z.optional(DateTimeInput),
});

/** An activity as returned by the API. Only `id` is guaranteed; unknown fields are kept. */
export const ActivitySchema = z.looseObject({
  id: z.string(),
  tenantId: opt(z.string()),
  relatedToType: opt(openEnum(RELATED_TO_TYPES)),
  relatedToId: opt(z.string()),
  ownerId: opt(z.string()),
  type: opt(openEnum(ACTIVITY_TYPES)),
  subject: opt(z.string()),
  activityDate: opt(z.string()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
  ownerName: opt(z.string()),
  description: opt(z.string()),
  relatedEntityName: opt(z.string()),
});

/**
 * What `activities.create()` accepts: the activity's fields and either `opportunityId` or an
 * explicit `relatedToType` + `relatedToId`.
 */
export type ActivityCreateInput = Omit<
  z.input<typeof ActivityCreateInputSchema>,
  'opportunityId' | 'relatedToType' | 'relatedToId'
> &
  (
    | { opportunityId: string; relatedToType?: never; relatedToId?: never }
    | { opportunityId?: never; relatedToType: ActivityRelatedToType; relatedToId: string }
  );

/** An activity as returned by the API. */
export type Activity = z.infer<typeof ActivitySchema>;
/** What `activities.list()` accepts. */
export type ActivityListParams = z.input<typeof ActivityListParamsSchema>;
/** A value of an activity's `type`, as sent. */
export type ActivityType = (typeof ACTIVITY_TYPES)[number];
/** A value of an activity's `relatedToType`, as sent. */
export type ActivityRelatedToType = (typeof RELATED_TO_TYPES)[number];
