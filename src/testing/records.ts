import type { Account } from '../schemas/account';
import type { Activity } from '../schemas/activity';
import type { WithUnknownFields } from '../schemas/common';
import type { Contact } from '../schemas/contact';
import type { Opportunity } from '../schemas/opportunity';
import type { FakeRateLimit } from './rate-limit';

/**
 * A record as stored: every stored record belongs to one tenant, and keeps any field it was sent
 * or seeded with (such as an opportunity's `stage`), as a server may.
 */
export type Owned<T> = WithUnknownFields<T> & { readonly tenantId: string };

// Derived fields (names, counts) are recomputed on every read, whatever a record stores.
/** An account as the fake stores it. */
export type StoredAccount = Owned<Account>;
/** A contact as the fake stores it. */
export type StoredContact = Owned<Contact>;
/** An opportunity as the fake stores it. */
export type StoredOpportunity = Owned<Opportunity>;
/** An activity as the fake stores it. */
export type StoredActivity = Owned<Activity>;

/** A tenant of the fake: its integration API key (null before one is generated). */
export interface FakeTenant {
  readonly id: string;
  apiKey: string | null;
  keyCreatedAt: string | null;
  keyLastUsedAt: string | null;
  /**
   * The rate limit of this tenant's API key, in place of the fake's `rateLimit`, for a fake whose
   * tenants have limits of their own. To change it mid-test, `store.addTenant()` the tenant again:
   * the key keeps its bucket.
   */
  readonly rateLimit?: FakeRateLimit | undefined;
}

/** A user who owns records; `owner`/`ownerName` fields are derived from it. */
export interface FakeUser {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  /** Bearer token of the user; only `admin` users may manage keys. */
  readonly token?: string | undefined;
  readonly role?: 'admin' | 'user' | undefined;
}

/** A grant that `grants.resolve` can find. */
export interface FakeGrant {
  readonly id: string;
  readonly tenantId: string;
  readonly [field: string]: unknown;
}

/** A record to seed: any of its fields; id, timestamps and tenant (the fake's own) default. */
export type SeedRecord<T> = Partial<T> & { tenantId?: string | undefined };

/** Records to seed the fake with: typed, with optional ids, timestamps and tenant. */
export interface FakeSeed {
  tenants?: readonly (Partial<FakeTenant> & { id: string })[];
  users?: readonly (Omit<FakeUser, 'tenantId'> & { tenantId?: string | undefined })[];
  accounts?: readonly SeedRecord<StoredAccount>[];
  contacts?: readonly SeedRecord<StoredContact>[];
  opportunities?: readonly SeedRecord<StoredOpportunity>[];
  activities?: readonly SeedRecord<StoredActivity>[];
  grants?: readonly {
    readonly id: string;
    readonly tenantId?: string | undefined;
    readonly [field: string]: unknown;
  }[];
}
