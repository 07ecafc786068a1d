import type { Account } from '../schemas/account';
import type { Activity } from '../schemas/activity';
import type { Contact } from '../schemas/contact';
import type { Opportunity } from '../schemas/opportunity';
import { csvOf, FAKE_EXPORT_TYPES, type FakeExportType } from './export';
import { checkRateLimit } from './rate-limit';
import type {
  FakeGrant,
  FakeSeed,
  FakeTenant,
  FakeUser,
  SeedRecord,
  StoredAccount,
  StoredActivity,
  StoredContact,
  StoredOpportunity,
} from './records';

const push = <K, V>(index: Map<K, V[]>, key: K, value: V) => {
  const list = index.get(key);
  if (list) list.push(value);
  else index.set(key, [value]);
};

/**
 * The fake's data: tenants, users, grants and the four resources, with the indexes the
 * endpoints need. Records are stored as written; derived fields (names, counts) are computed
 * when a record is read through a `view…()` method, as the service would.
 */
export class FakeStore {
  readonly tenants = new Map<string, FakeTenant>();
  readonly users = new Map<string, FakeUser>();
  readonly grants = new Map<string, FakeGrant>();
  readonly accounts = new Map<string, StoredAccount>();
  readonly contacts = new Map<string, StoredContact>();
  readonly opportunities = new Map<string, StoredOpportunity>();
  readonly activities = new Map<string, StoredActivity>();
  readonly #contactsByTenant = new Map<string, StoredContact[]>();
  readonly #activitiesByTarget = new Map<string, StoredActivity[]>();
  readonly #now: () => Date;
  #sequence = 0;
  readonly #ids = new Set<string>();

  /** The tenant of seeded records that name none. */
  readonly defaultTenantId: string;

  constructor(now: () => Date = () => new Date(), defaultTenantId = 'tenant_demo') {
    this.#now = now;
    this.defaultTenantId = defaultTenantId;
  }

  /** The current time as the fake stamps it. */
  now(): string {
    return this.#now().toISOString();
  }

  /** A new id: `prefix_` and a sequence number, unique within this store. */
  newId(prefix: string): string {
    this.#sequence += 1;
    return `${prefix}_${this.#sequence.toString(36).padStart(6, '0')}`;
  }

  /** Adds seed records (ids and timestamps are generated where missing). */
  seed(seed: FakeSeed): this {
    for (const tenant of seed.tenants ?? []) this.addTenant(tenant);
    const tenantId = this.defaultTenantId;
    for (const user of seed.users ?? []) this.users.set(user.id, { ...user, tenantId: user.tenantId ?? tenantId });
    for (const grant of seed.grants ?? [])
      this.grants.set(grant.id, { ...grant, tenantId: grant.tenantId ?? tenantId });
    for (const account of seed.accounts ?? []) this.insertAccount(account);
    for (const contact of seed.contacts ?? []) this.insertContact(contact);
    for (const opportunity of seed.opportunities ?? []) this.insertOpportunity(opportunity);
    for (const activity of seed.activities ?? []) this.insertActivity(activity);
    return this;
  }

  /** Adds (or replaces) a tenant; `apiKey: null` for one without a key yet. Throws a RangeError for an invalid `rateLimit`. */
  addTenant(tenant: Partial<FakeTenant> & { id: string }): FakeTenant {
    checkRateLimit(tenant.rateLimit, `tenant ${tenant.id}'s rateLimit`);
    const stored: FakeTenant = {
      apiKey: null,
      keyCreatedAt: tenant.apiKey ? this.now() : null,
      keyLastUsedAt: null,
      ...tenant,
    };
    this.tenants.set(stored.id, stored);
    return stored;
  }

  // One copy per record, and the clock read only when a timestamp is missing: seeding 100,000 records stays fast.
  #stamp<
    T extends { id?: string | undefined; createdAt?: string | null | undefined; updatedAt?: string | null | undefined },
  >(prefix: string, record: T) {
    const stamped = { ...record } as T & {
      id: string;
      createdAt: string;
      updatedAt: string;
      tenantId: string;
    };
    stamped.tenantId ??= this.defaultTenantId;
    stamped.id ??= this.newId(prefix);
    if (this.#ids.has(stamped.id)) throw new Error(`The fake store already holds a record with id ${stamped.id}`);
    this.#ids.add(stamped.id);
    if (!stamped.createdAt || !stamped.updatedAt) {
      const now = this.now();
      stamped.createdAt ||= now;
      stamped.updatedAt ||= stamped.createdAt;
    }
    return stamped;
  }

  /** Stores an account, generating its id and timestamps where missing. */
  insertAccount(record: SeedRecord<StoredAccount>): StoredAccount {
    const stored = { status: 'active', ...this.#stamp('acc', record) } as StoredAccount;
    this.accounts.set(stored.id, stored);
    return stored;
  }

  /** Stores a contact, generating its id and timestamps where missing. */
  insertContact(record: SeedRecord<StoredContact>): StoredContact {
    const stored = { status: 'active', isPrimary: false, ...this.#stamp('con', record) } as StoredContact;
    this.contacts.set(stored.id, stored);
    push(this.#contactsByTenant, stored.tenantId, stored);
    return stored;
  }

  /** Stores an opportunity, generating its id and timestamps where missing. */
  insertOpportunity(record: SeedRecord<StoredOpportunity>): StoredOpportunity {
    const stored = { isIntegration: true, ...this.#stamp('opp', record) } as StoredOpportunity;
    this.opportunities.set(stored.id, stored);
    return stored;
  }

  /** Stores an activity, generating its id and timestamps where missing. */
  insertActivity(record: SeedRecord<StoredActivity>): StoredActivity {
    const stored = this.#stamp('act', record) as StoredActivity;
    stored.activityDate ??= stored.createdAt;
    this.activities.set(stored.id, stored);
    push(this.#activitiesByTarget, `${stored.relatedToType}:${stored.relatedToId}`, stored);
    return stored;
  }

  /**
   * Removes every account, contact, opportunity and activity, with the indexes that list them and
   * the ids they held; tenants, users and grants stay. Clearing the maps alone would leave the
   * lists showing the old records.
   */
  clear(): void {
    for (const table of [this.accounts, this.contacts, this.opportunities, this.activities]) table.clear();
    this.#contactsByTenant.clear();
    this.#activitiesByTarget.clear();
    this.#ids.clear();
  }

  /** Merges `changes` into a stored record and stamps `updatedAt`. */
  update<T extends { updatedAt?: string | null | undefined }>(record: T, changes: Partial<T>): T {
    return Object.assign(record, changes, { updatedAt: this.now() });
  }

  /** Contacts of a tenant, in insertion order. */
  contactsOf(tenantId: string): readonly StoredContact[] {
    return this.#contactsByTenant.get(tenantId) ?? [];
  }

  /** Activities related to a record, in insertion order. */
  activitiesOf(relatedToType: string, relatedToId: string): readonly StoredActivity[] {
    return this.#activitiesByTarget.get(`${relatedToType}:${relatedToId}`) ?? [];
  }

  /** A record of the tenant, or undefined: another tenant's records are invisible. */
  find<T extends { tenantId: string }>(table: Map<string, T>, tenantId: string, id: string | null | undefined) {
    const record = id == null ? undefined : table.get(id);
    return record?.tenantId === tenantId ? record : undefined;
  }

  #userName(tenantId: string, id: string | null | undefined): string | null {
    const user = id == null ? undefined : this.users.get(id);
    return user?.tenantId === tenantId ? user.name : null;
  }

  #contactName(contact: StoredContact | undefined): string | null {
    if (!contact) return null;
    return [contact.firstName, contact.lastName].filter(Boolean).join(' ') || contact.email || null;
  }

  // Accounts, contacts and opportunities do not document a tenantId field, so views leave it out.
  /** An account as the API returns it: `owner_name` derived. */
  viewAccount({ tenantId, ...account }: StoredAccount): Account {
    return { ...account, owner_name: this.#userName(tenantId, account.ownerId) };
  }

  /** A contact as the API returns it: `account_name` derived. */
  viewContact({ tenantId, ...contact }: StoredContact): Contact {
    const account = this.find(this.accounts, tenantId, contact.accountId);
    return { ...contact, account_name: account?.name ?? null };
  }

  /** An opportunity as the API returns it: names, `activitiesCount` and `lastActivityDate` derived. */
  viewOpportunity({ tenantId, ...opportunity }: StoredOpportunity): Opportunity {
    const activities = this.activitiesOf('opportunity', opportunity.id);
    // Compared as instants: stored dates keep the offset they were sent with.
    let lastActivityDate: string | null = null;
    let latest = Number.NEGATIVE_INFINITY;
    for (const activity of activities) {
      const when = activity.activityDate ? Date.parse(activity.activityDate) : Number.NaN;
      if (when > latest) {
        latest = when;
        lastActivityDate = activity.activityDate ?? null;
      }
    }
    return {
      ...opportunity,
      account: this.find(this.accounts, tenantId, opportunity.accountId)?.name ?? null,
      contact: this.#contactName(this.find(this.contacts, tenantId, opportunity.contactId)),
      owner: this.#userName(tenantId, opportunity.ownerId),
      activitiesCount: activities.length,
      lastActivityDate,
    };
  }

  /**
   * The tenant's records of one type as CSV, as a CRM's UI or report exports them: a header of
   * `id` and every field the API returns (named as it names them, derived ones included), a row
   * per record in the order they were stored, RFC 4180 with CRLF line ends. What
   * `crm sync resolve --match <export.csv>` reads to settle records in doubt.
   *
   * @param type - `'accounts'`, `'contacts'`, `'opportunities'` or `'activities'`.
   * @param tenantId - The tenant whose records it holds; default the store's own tenant.
   * Throws a RangeError for any other type.
   *
   * @example
   * ```ts
   * writeFileSync('crm-accounts.csv', fake.store.exportCsv('accounts'));
   * ```
   */
  exportCsv(type: FakeExportType, tenantId: string = this.defaultTenantId): string {
    if (!FAKE_EXPORT_TYPES.includes(type)) {
      throw new RangeError(`type must be ${FAKE_EXPORT_TYPES.join(', ')}, not ${JSON.stringify(type)}`);
    }
    const views: Record<string, unknown>[] = [];
    const mine = <T extends { tenantId: string }>(table: Map<string, T>, view: (record: T) => object) => {
      for (const record of table.values())
        if (record.tenantId === tenantId) views.push(view(record) as Record<string, unknown>);
    };
    if (type === 'accounts') mine(this.accounts, (r) => this.viewAccount(r));
    else if (type === 'contacts') mine(this.contacts, (r) => this.viewContact(r));
    else if (type === 'opportunities') mine(this.opportunities, (r) => this.viewOpportunity(r));
    else mine(this.activities, (r) => this.viewActivity(r));
    return csvOf(views);
  }

  /** An activity as the API returns it: `ownerName` and `relatedEntityName` derived. */
  viewActivity(activity: StoredActivity): Activity {
    const { tenantId, relatedToType, relatedToId } = activity;
    let relatedEntityName: string | null = null;
    if (relatedToType === 'opportunity')
      relatedEntityName = this.find(this.opportunities, tenantId, relatedToId)?.name ?? null;
    if (relatedToType === 'account') relatedEntityName = this.find(this.accounts, tenantId, relatedToId)?.name ?? null;
    if (relatedToType === 'contact')
      relatedEntityName = this.#contactName(this.find(this.contacts, tenantId, relatedToId));
    return { ...activity, ownerName: this.#userName(tenantId, activity.ownerId), relatedEntityName };
  }
}
