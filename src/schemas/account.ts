import * as z from 'zod/mini';
import { NonEmptyString, OpenObject, openEnum, opt } from './common';

/** Values of an account's `status`. */
export const ACCOUNT_STATUSES = ['active', 'inactive', 'prospect'] as const;

// Optional on create and on update; written out, not z.partial() (PERFORMANCE.md, "zod features left out").
const accountFields = {
  ownerId: z.optional(z.string()),
  status: z.optional(z.enum(ACCOUNT_STATUSES)),
  country: z.optional(z.string()),
  industry: z.optional(z.string()),
  phone: z.optional(z.string()),
  email: z.optional(z.string()),
  website: z.optional(z.string()),
  description: z.optional(z.string()),
  address: z.optional(z.string()),
  city: z.optional(z.string()),
  state: z.optional(z.string()),
  postalCode: z.optional(z.string()),
  employees: z.optional(z.string()),
  annualRevenue: z.optional(z.number()),
};

/** Body of `accounts.create()`: `name` is required; `type`, when sent, is non-empty. */
export const AccountCreateInputSchema = z.strictObject({
  name: NonEmptyString,
  type: z.optional(NonEmptyString),
  ...accountFields,
});

/** Body of `accounts.update()`: every field is optional. */
export const AccountUpdateInputSchema = z.strictObject({
  name: z.optional(z.string()),
  type: z.optional(z.string()),
  ...accountFields,
});

/** An account as returned by `accounts.create()`. Only `id` is guaranteed; unknown fields are kept. */
export const AccountSchema = z.looseObject({
  id: z.string(),
  name: opt(z.string()),
  industry: opt(z.string()),
  status: opt(openEnum(ACCOUNT_STATUSES)),
  employees: opt(z.string()),
  website: opt(z.string()),
  phone: opt(z.string()),
  email: opt(z.string()),
  address: opt(z.string()),
  city: opt(z.string()),
  state: opt(z.string()),
  country: opt(z.string()),
  postalCode: opt(z.string()),
  annualRevenue: opt(z.number()),
  ownerId: opt(z.string()),
  owner_name: opt(z.string()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
});

/**
 * What `accounts.update()` returns. The spec says only that it is an object, so it is an open
 * object; fields it shares with {@link Account} are usually present.
 */
export const AccountUpdateResultSchema = OpenObject;

/** An account as returned by `accounts.create()`. */
export type Account = z.infer<typeof AccountSchema>;
/** What `accounts.create()` accepts. */
export type AccountCreateInput = z.input<typeof AccountCreateInputSchema>;
/** What `accounts.update()` accepts: any subset of the create fields. */
export type AccountUpdateInput = z.input<typeof AccountUpdateInputSchema>;
/** What `accounts.update()` returns: an object whose fields the spec does not show. */
export type AccountUpdateResult = z.infer<typeof AccountUpdateResultSchema>;
/** A value of an account's `status`, as sent. */
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
