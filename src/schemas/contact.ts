import * as z from 'zod/mini';
import { openEnum, opt } from './common';
import { PageParams } from './pagination';

/**
 * zod's own email pattern (`z.regexes.email`, less two needless escapes) as a regex check, not
 * z.email() (PERFORMANCE.md, "zod features left out"); test/validation.test.ts holds the two together.
 */
const Email = z.string().check(
  z.regex(/^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/, {
    error: 'Invalid email address',
  }),
);

/** Values of a contact's `status`. */
export const CONTACT_STATUSES = ['active', 'inactive'] as const;

/**
 * Body of `contacts.create()` and `contacts.update()`. The spec does not say which fields are
 * required, so none is; `email` must be an email address when sent.
 */
export const ContactInputSchema = z.strictObject({
  email: z.optional(Email),
  accountId: z.optional(z.string()),
  firstName: z.optional(z.string()),
  lastName: z.optional(z.string()),
  phone: z.optional(z.string()),
  mobile: z.optional(z.string()),
  position: z.optional(z.string()),
  department: z.optional(z.string()),
  isPrimary: z.optional(z.boolean()),
  status: z.optional(z.enum(CONTACT_STATUSES)),
});

/** Query of `contacts.list()`: `page`, `limit` and a `status` filter. */
export const ContactListParamsSchema = z.strictObject({
  ...PageParams,
  status: z.optional(z.enum(CONTACT_STATUSES)),
});

/** A contact as returned by the API. Only `id` is guaranteed; unknown fields are kept. */
export const ContactSchema = z.looseObject({
  id: z.string(),
  accountId: opt(z.string()),
  firstName: opt(z.string()),
  lastName: opt(z.string()),
  isPrimary: opt(z.boolean()),
  status: opt(openEnum(CONTACT_STATUSES)),
  email: opt(z.string()),
  phone: opt(z.string()),
  mobile: opt(z.string()),
  position: opt(z.string()),
  department: opt(z.string()),
  account_name: opt(z.string()),
  source: opt(z.string()),
  isIntegration: opt(z.boolean()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
});

/** A contact as returned by the API. */
export type Contact = z.infer<typeof ContactSchema>;
/** What `contacts.create()` accepts. */
export type ContactCreateInput = z.input<typeof ContactInputSchema>;
/** What `contacts.update()` accepts. */
export type ContactUpdateInput = z.input<typeof ContactInputSchema>;
/** What `contacts.list()` accepts. */
export type ContactListParams = z.input<typeof ContactListParamsSchema>;
/** A value of a contact's `status`, as sent. */
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
