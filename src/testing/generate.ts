import { ACTIVITY_TYPES } from '../schemas/activity';
import { OPPORTUNITY_TYPES } from '../schemas/opportunity';
import type { FakeSeed, FakeUser, StoredAccount, StoredActivity, StoredContact, StoredOpportunity } from './records';

/** How many records `generateFakeData()` makes, from which seed, for which tenant. */
export interface GenerateOptions {
  /** The same seed gives the same records. Default 1. */
  seed?: number | undefined;
  tenantId?: string | undefined;
  users?: number | undefined;
  accounts?: number | undefined;
  /** Contacts, spread over the accounts. */
  contacts?: number | undefined;
  /** Opportunities, spread over the accounts. */
  opportunities?: number | undefined;
  /** Activities, spread over the opportunities. */
  activities?: number | undefined;
}

// mulberry32: a tiny, fast, seedable generator; quality is ample for test data.
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken', 'Margaret', 'Linus', 'Radia', 'Donald'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Thompson', 'Hamilton', 'Torvalds', 'Perlman'];
const COMPANY = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne'];
const SUFFIX = ['Ltd', 'Inc', 'GmbH', 'SA', 'BV', 'AB'];
const INDUSTRY = ['Software', 'Manufacturing', 'Retail', 'Finance', 'Healthcare', 'Logistics'];
const STAGE = ['qualification', 'discovery', 'proposal', 'negotiation', 'closed_won', 'closed_lost'];
const SUBJECT = ['Intro call', 'Demo', 'Follow-up', 'Pricing discussion', 'Contract review', 'Check-in'];
const EPOCH = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

/**
 * Deterministic, realistic records for tests and benchmarks: the same options give the same
 * records, ids included. Fast enough for 100,000 activities in a fraction of a second.
 *
 * @example
 * ```ts
 * const fake = createFakeCrm({ seed: generateFakeData({ seed: 7, opportunities: 1, activities: 1000 }) });
 * ```
 */
export function generateFakeData(options: GenerateOptions = {}): FakeSeed {
  const next = random(options.seed ?? 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const tenantId = options.tenantId ?? 'tenant_demo';
  // The tenant is part of every id: ids are unique across the store, and two tenants may share a seed.
  const prefix = `${tenantId}_g${options.seed ?? 1}`;
  const at = (minutes: number) => new Date(EPOCH + minutes * MINUTE).toISOString();

  const users: FakeUser[] = Array.from({ length: options.users ?? 5 }, (_, i) => ({
    id: `${prefix}_usr_${i}`,
    tenantId,
    name: `${pick(FIRST)} ${pick(LAST)}`,
  }));
  const owner = () => (users.length ? pick(users).id : null);

  const accounts: StoredAccount[] = Array.from({ length: options.accounts ?? 10 }, (_, i) => ({
    id: `${prefix}_acc_${i}`,
    tenantId,
    name: `${pick(COMPANY)} ${pick(SUFFIX)} ${i}`,
    industry: pick(INDUSTRY),
    status: pick(['active', 'inactive', 'prospect'] as const),
    country: pick(['GB', 'DE', 'FR', 'US', 'SE', 'NL']),
    ownerId: owner(),
    annualRevenue: Math.round(next() * 50_000_000),
    createdAt: at(i),
  }));
  const account = () => (accounts.length ? pick(accounts).id : null);

  const contacts: StoredContact[] = Array.from({ length: options.contacts ?? 20 }, (_, i) => {
    const firstName = pick(FIRST);
    const lastName = pick(LAST);
    return {
      id: `${prefix}_con_${i}`,
      tenantId,
      accountId: account(),
      firstName,
      lastName,
      email: `${firstName}.${lastName}.${i}@example.com`.toLowerCase(),
      status: next() < 0.85 ? ('active' as const) : ('inactive' as const),
      isPrimary: i % 5 === 0,
      position: pick(['CEO', 'CTO', 'Buyer', 'Engineer', 'Analyst']),
      createdAt: at(i),
    };
  });

  const opportunities: StoredOpportunity[] = Array.from({ length: options.opportunities ?? 10 }, (_, i) => ({
    id: `${prefix}_opp_${i}`,
    tenantId,
    name: `${pick(COMPANY)} ${pick(['expansion', 'renewal', 'pilot', 'migration'])} ${i}`,
    accountId: account(),
    ownerId: owner(),
    amount: Math.round(next() * 200_000),
    probability: Math.round(next() * 100),
    stage: pick(STAGE),
    type: pick(OPPORTUNITY_TYPES),
    expectedCloseDate: at(60 * 24 * (30 + i)),
    createdAt: at(i),
  }));

  const activityCount = options.activities ?? 50;
  const activities: StoredActivity[] = new Array(opportunities.length ? activityCount : 0);
  for (let i = 0; i < activities.length; i++) {
    const when = at(i * 7);
    activities[i] = {
      id: `${prefix}_act_${i}`,
      tenantId,
      relatedToType: 'opportunity',
      relatedToId: (opportunities[i % opportunities.length] as StoredOpportunity).id,
      type: pick(ACTIVITY_TYPES),
      subject: pick(SUBJECT),
      ownerId: owner(),
      activityDate: when,
      createdAt: when,
      updatedAt: when,
    };
  }

  return { users, accounts, contacts, opportunities, activities };
}
