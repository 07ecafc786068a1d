import type { CrmClient } from 'crm-integration-sdk';
import type * as z from 'zod/mini';
import type { RequestOptions } from '../options';
import { AccountCreateInputSchema } from '../schemas/account';
import { ActivityCreateInputSchema } from '../schemas/activity';
import { ContactInputSchema } from '../schemas/contact';
import { OpportunityCreateInputSchema } from '../schemas/opportunity';
import type { SyncType } from './journal';

/** A reference to a parent by its key in the source, sent as the parent's CRM id. */
interface Reference {
  /** The record's field holding the parent's key. */
  readonly keyField: 'accountKey' | 'contactKey' | 'opportunityKey';
  /** The parent's list. */
  readonly parent: SyncType;
  /** The data field the parent's CRM id goes in. */
  readonly idField: 'accountId' | 'contactId' | 'opportunityId';
  /** Data fields that give the same reference directly, by CRM id: with the key, the record is invalid. */
  readonly direct: readonly string[];
}

type Body = Record<string, unknown>;

/** How each list is synced: its references, its schema, its calls (a row per type, STYLE.md 1). */
export interface Kind {
  readonly type: SyncType;
  /** The singular, for messages. */
  readonly noun: string;
  readonly references: readonly Reference[];
  /** Its data's schema, checked through its Standard Schema side (decide.ts, check). */
  readonly schema: z.ZodMiniType;
  create(crm: CrmClient, body: Body, options: RequestOptions | undefined): Promise<{ id: string }>;
  /** Undefined where the API cannot update (activities). */
  readonly update:
    | ((crm: CrmClient, id: string, body: Body, options: RequestOptions | undefined) => Promise<unknown>)
    | undefined;
  /** Whether a removed record is set inactive (the API cannot remove any). */
  readonly deactivates: boolean;
}

const account: Reference = { keyField: 'accountKey', parent: 'accounts', idField: 'accountId', direct: ['accountId'] };

// The inputs were validated by `schema` before these calls: the casts only name what was checked.
export const KINDS: readonly Kind[] = [
  {
    type: 'accounts',
    noun: 'account',
    references: [],
    schema: AccountCreateInputSchema,
    create: (crm, body, options) => crm.accounts.create(body as never, options),
    update: (crm, id, body, options) => crm.accounts.update(id, body as never, options),
    deactivates: true,
  },
  {
    type: 'contacts',
    noun: 'contact',
    references: [account],
    schema: ContactInputSchema,
    create: (crm, body, options) => crm.contacts.create(body as never, options),
    update: (crm, id, body, options) => crm.contacts.update(id, body as never, options),
    deactivates: true,
  },
  {
    type: 'opportunities',
    noun: 'opportunity',
    references: [account, { keyField: 'contactKey', parent: 'contacts', idField: 'contactId', direct: ['contactId'] }],
    schema: OpportunityCreateInputSchema,
    create: (crm, body, options) => crm.opportunities.create(body as never, options),
    update: (crm, id, body, options) => crm.opportunities.update(id, body as never, options),
    deactivates: false,
  },
  {
    type: 'activities',
    noun: 'activity',
    references: [
      {
        keyField: 'opportunityKey',
        parent: 'opportunities',
        idField: 'opportunityId',
        direct: ['opportunityId', 'relatedToId', 'relatedToType'],
      },
    ],
    schema: ActivityCreateInputSchema,
    create: (crm, body, options) => crm.activities.create(body as never, options),
    update: undefined,
    deactivates: false,
  },
];

export const kindOf = (type: SyncType): Kind => KINDS.find((k) => k.type === type) as Kind;

export const SYNC_TYPES: readonly SyncType[] = KINDS.map((k) => k.type);
