import * as z from 'zod/mini';
import { issuesOf } from '../internal/endpoint/issues';
import { faultText } from '../internal/endpoint/json-fault';
import { parseContext } from '../internal/endpoint/parse-context';
import { generateFakeData } from './generate';
import { checkRateLimit } from './rate-limit';
import type { FakeSeed } from './records';

/*
 * The tenants `crm-fake` serves from the shell: `--tenants acme,globex` (each with generated
 * records, its own API key and administrator token), or a seed file (README, "Seeding crm-fake").
 * The first tenant is the fake's own: seeded records that name no tenant are its.
 */

/** A tenant as `crm-fake` prints it: what a client of that tenant connects with. */
interface PrintedTenant {
  readonly id: string;
  readonly apiKey: string | null;
  readonly adminToken: string | undefined;
}

/** What `crm-fake` starts the fake with. */
export interface ServedTenants {
  /** The fake's own tenant: the first. */
  readonly tenantId: string;
  readonly seed: FakeSeed;
  readonly tenants: readonly PrintedTenant[];
}

/** Thrown for a wrong `--tenants` or seed file: its message is safe to print (no key, no file content). */
export class TenantsError extends Error {
  override readonly name = 'TenantsError';
}

/** A tenant id that prints as it is on a `NAME=value` line: no space, quote, `=` or control character. */
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const TENANT_ID_RULE = 'letters, digits, _ . and -, starting with a letter or digit, up to 64 characters';
/** A key or token that prints as it is: visible ASCII, no space or quote. */
const CREDENTIAL = /^[!#-&(-~]{1,256}$/;

/** `fake-api-key-<id>` and `fake-admin-token-<id>`, as the fake names its own tenant's. */
const apiKeyOf = (id: string) => `fake-api-key-${id}`;
const adminTokenOf = (id: string) => `fake-admin-token-${id}`;

/** The tenant ids of `--tenants`: comma-separated, each valid, none twice. */
function tenantIds(list: string): string[] {
  const ids = list.split(',').map((id) => id.trim());
  for (const id of ids) {
    if (!TENANT_ID.test(id)) {
      throw new TenantsError(`--tenants: ${JSON.stringify(id)} is not a tenant id (${TENANT_ID_RULE})`);
    }
  }
  const twice = firstRepeated(ids);
  if (twice !== undefined) throw new TenantsError(`--tenants: tenant "${twice}" is named twice`);
  return ids;
}

/** The first value that occurs twice, in one pass: a seed may hold hundreds of thousands of ids. */
function firstRepeated(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) return value;
    seen.add(value);
  }
  return undefined;
}

/** What the fake's constructor adds for its own tenant, added for each of the others. */
function adminAndGrant(id: string): Pick<FakeSeed, 'users' | 'grants'> {
  return {
    users: [{ id: `usr_admin_${id}`, tenantId: id, name: `${id} Admin`, token: adminTokenOf(id), role: 'admin' }],
    grants: [{ id: `grant_${id}`, tenantId: id, status: 'active', scopes: ['crm.read', 'crm.write'] }],
  };
}

/** `--tenants acme,globex,initech`: each tenant with `records` generated records of each kind. */
export function tenantsFromList(list: string, records: number): ServedTenants {
  const ids = tenantIds(list);
  const parts = ids.map((id, i) => {
    const data = generateFakeData({
      seed: i + 1,
      tenantId: id,
      accounts: records,
      contacts: records,
      opportunities: records,
      activities: records * 10,
    });
    // The first is the fake's own tenant, whose key, administrator and grant the fake adds itself.
    const own = i === 0 ? { users: [], grants: [] } : adminAndGrant(id);
    return { ...data, users: [...(own.users ?? []), ...(data.users ?? [])], grants: own.grants ?? [] };
  });
  const seed: FakeSeed = {
    tenants: ids.slice(1).map((id) => ({ id, apiKey: apiKeyOf(id) })),
    users: parts.flatMap((part) => part.users),
    grants: parts.flatMap((part) => part.grants),
    accounts: parts.flatMap((part) => part.accounts ?? []),
    contacts: parts.flatMap((part) => part.contacts ?? []),
    opportunities: parts.flatMap((part) => part.opportunities ?? []),
    activities: parts.flatMap((part) => part.activities ?? []),
  };
  const tenants = ids.map((id) => ({ id, apiKey: apiKeyOf(id), adminToken: adminTokenOf(id) }));
  return { tenantId: ids[0] as string, seed, tenants };
}

const SeedRecord = z.looseObject({
  id: z.optional(z.string().check(z.minLength(1))),
  tenantId: z.optional(z.string()),
});
const Seed = z.strictObject({
  tenants: z.optional(
    z.array(
      z.strictObject({
        id: z.string().check(z.regex(TENANT_ID, `Expected a tenant id: ${TENANT_ID_RULE}`)),
        apiKey: z.optional(
          z.nullable(z.string().check(z.regex(CREDENTIAL, 'Expected visible ASCII without spaces or quotes'))),
        ),
        rateLimit: z.optional(z.strictObject({ perSecond: z.number(), burst: z.number() })),
      }),
    ),
  ),
  users: z.optional(
    z.array(
      z.strictObject({
        id: z.string().check(z.minLength(1)),
        tenantId: z.optional(z.string()),
        name: z.string(),
        token: z.optional(z.string().check(z.regex(CREDENTIAL, 'Expected visible ASCII without spaces or quotes'))),
        role: z.optional(z.enum(['admin', 'user'])),
      }),
    ),
  ),
  accounts: z.optional(z.array(SeedRecord)),
  contacts: z.optional(z.array(SeedRecord)),
  opportunities: z.optional(z.array(SeedRecord)),
  activities: z.optional(z.array(SeedRecord)),
  grants: z.optional(
    z.array(z.looseObject({ id: z.string().check(z.minLength(1)), tenantId: z.optional(z.string()) })),
  ),
});

/**
 * A seed file's text (`crm-fake --seed file.json`): a `FakeSeed` as JSON. A tenant without
 * `apiKey` gets `fake-api-key-<id>` (`null`: none yet), and one without an administrator gets one
 * whose token is `fake-admin-token-<id>`. `name` says the file in messages; no message repeats
 * the file's content, which holds keys.
 */
export function tenantsFromSeed(text: string, name: string): ServedTenants {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text around the fault, which may be a key: only the position is told.
    throw new TenantsError(`--seed ${name}: not valid JSON${faultText(text)}`);
  }
  const parsed = z.safeParse(Seed, json, parseContext);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error).map(({ field, message }) => `${field || '(the file)'}: ${message}`);
    throw new TenantsError(`--seed ${name}: ${issues.slice(0, 5).join('; ')}`);
  }
  const seed = parsed.data as FakeSeed;
  const given = seed.tenants ?? [];
  const ids = given.map((tenant) => tenant.id);
  const twice = firstRepeated(ids);
  if (twice !== undefined) throw new TenantsError(`--seed ${name}: tenant "${twice}" is listed twice`);
  const tenantId = ids[0] ?? 'tenant_demo';
  const known = new Set([tenantId, ...ids]);
  for (const kind of ['users', 'grants', 'accounts', 'contacts', 'opportunities', 'activities'] as const) {
    for (const [i, record] of (seed[kind] ?? []).entries()) {
      if (record.tenantId !== undefined && !known.has(record.tenantId)) {
        throw new TenantsError(`--seed ${name}: ${kind}.${i}.tenantId names no tenant of the file`);
      }
    }
  }
  // The store refuses these as it seeds; said here, they are the file's fault, named as such.
  for (const [i, tenant] of given.entries()) {
    try {
      checkRateLimit(tenant.rateLimit, `tenants.${i}.rateLimit`);
    } catch (error) {
      throw new TenantsError(`--seed ${name}: ${(error as Error).message}`);
    }
  }
  const recordIds = (['accounts', 'contacts', 'opportunities', 'activities'] as const).flatMap((kind) =>
    (seed[kind] ?? []).flatMap((record) => (typeof record.id === 'string' ? [record.id] : [])),
  );
  const repeated = firstRepeated(recordIds);
  if (repeated !== undefined)
    throw new TenantsError(`--seed ${name}: record id ${JSON.stringify(repeated)} is used twice`);
  // A bearer token names one user: the fake would otherwise act for whichever it found first.
  const tokens = (seed.users ?? []).flatMap((user) => (user.token === undefined ? [] : [user.token]));
  if (firstRepeated(tokens) !== undefined) {
    throw new TenantsError(`--seed ${name}: two users have the same token`);
  }
  const userIds = (seed.users ?? []).map((user) => user.id);
  const sameUser = firstRepeated(userIds);
  if (sameUser !== undefined)
    throw new TenantsError(`--seed ${name}: user id ${JSON.stringify(sameUser)} is used twice`);
  return servedTenantsOf(seed);
}

/** Whose the fake is: `createFakeCrm()`'s `tenantId` and `apiKey` options, where given. */
interface OwnTenant {
  readonly tenantId?: string | undefined;
  readonly apiKey?: string | null | undefined;
}

/**
 * The tenants a seed serves, the same for `createFakeCrm({ seed })` and `crm-fake --seed`: the
 * fake's own tenant is `own.tenantId`, else the seed's first tenant, else `tenant_demo`. A tenant
 * without `apiKey` gets `fake-api-key-<id>` (`null`: none yet; the fake's own takes `own.apiKey`
 * first), and every other tenant without an administrator gets one whose token is
 * `fake-admin-token-<id>`, and a grant. Applying it to what it returned changes nothing.
 */
export function servedTenantsOf(seed: FakeSeed, own: OwnTenant = {}): ServedTenants {
  const given = seed.tenants ?? [];
  const tenantId = own.tenantId ?? given[0]?.id ?? 'tenant_demo';
  const users = [...(seed.users ?? [])];
  const grants = [...(seed.grants ?? [])];
  const tenants = given.map((tenant) => ({
    ...tenant,
    apiKey:
      tenant.apiKey !== undefined
        ? tenant.apiKey
        : tenant.id === tenantId && own.apiKey !== undefined
          ? own.apiKey
          : apiKeyOf(tenant.id),
  }));
  // Each tenant's first administrator with a token, and the tenants with a grant: looked up by
  // map, since a seed may list thousands of tenants and users.
  const admins = new Map<string, string>();
  const addAdmins = (list: FakeSeed['users']) => {
    for (const u of list ?? []) {
      const id = u.tenantId ?? tenantId;
      if (u.role === 'admin' && u.token !== undefined && !admins.has(id)) admins.set(id, u.token);
    }
  };
  addAdmins(users);
  const granted = new Set(grants.map((g) => g.tenantId));
  // The fake adds its own tenant's administrator and grant itself.
  for (const { id } of tenants) {
    if (id === tenantId || admins.has(id)) continue;
    const extra = adminAndGrant(id);
    users.push(...(extra.users ?? []));
    addAdmins(extra.users);
    if (!granted.has(id)) grants.push(...(extra.grants ?? []));
    granted.add(id);
  }
  const adminOf = (id: string) => admins.get(id) ?? (id === tenantId ? adminTokenOf(id) : undefined);
  const listed = tenants.some((tenant) => tenant.id === tenantId)
    ? tenants
    : [{ id: tenantId, apiKey: own.apiKey !== undefined ? own.apiKey : apiKeyOf(tenantId) }, ...tenants];
  const printed = listed.map((tenant) => ({ id: tenant.id, apiKey: tenant.apiKey, adminToken: adminOf(tenant.id) }));
  return { tenantId, seed: { ...seed, tenants, users, grants }, tenants: printed };
}
