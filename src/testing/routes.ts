import type { endpoints } from '../endpoints';
import { FakeHttpError } from './http-error';
import type { StoredActivity } from './records';
import type { FakeStore } from './store';

/** What a route gets once the request is authenticated and validated. */
interface RouteContext {
  readonly store: FakeStore;
  readonly tenantId: string;
  readonly params: Record<string, string>;
  readonly query: Record<string, unknown>;
  readonly body: Record<string, unknown> | undefined;
  readonly defaultLimit: number;
}

/** What a route answers inside the success envelope. */
interface RouteResult {
  readonly data: unknown;
  readonly pagination?: { page: number; limit: number; total: number; pages: number };
}

export type FakeRoute = (ctx: RouteContext) => RouteResult;

const notFound = (what: string, id: string | null | undefined): never => {
  throw new FakeHttpError(404, 'NOT_FOUND', `${what} ${id ?? ''} not found`.replace('  ', ' '));
};

const invalidReference = (field: string, id: unknown): never => {
  throw new FakeHttpError(400, 'INVALID_REFERENCE', `${field}: no record ${String(id)} in this tenant`, [
    { field, message: 'No such record in this tenant' },
  ]);
};

function paginate<T>(items: readonly T[], ctx: RouteContext) {
  const page = (ctx.query.page as number | undefined) ?? 1;
  const limit = (ctx.query.limit as number | undefined) ?? ctx.defaultLimit;
  const total = items.length;
  const start = (page - 1) * limit;
  return {
    items: items.slice(start, start + limit),
    pagination: { page, limit, total, pages: Math.ceil(total / limit) },
  };
}

function checkReferences(ctx: RouteContext, refs: Record<string, 'accounts' | 'contacts' | 'opportunities'>) {
  for (const [field, table] of Object.entries(refs)) {
    const id = ctx.body?.[field];
    if (id !== undefined && id !== null && !ctx.store.find(ctx.store[table], ctx.tenantId, id as string)) {
      invalidReference(field, id);
    }
  }
}

const inRange = (activity: StoredActivity, from: unknown, to: unknown) => {
  const when = activity.activityDate ? Date.parse(activity.activityDate) : Number.NaN;
  if (typeof from === 'string' && !(when >= Date.parse(from))) return false;
  if (typeof to === 'string' && !(when <= Date.parse(to))) return false;
  return true;
};

/** One handler per row of the endpoint table: the service's behaviour, as the fake plays it. */
export const routes: Record<keyof typeof endpoints, FakeRoute> = {
  getOpportunity: (ctx) => {
    const { store, tenantId, params } = ctx;
    const opportunity = store.find(store.opportunities, tenantId, params.id) ?? notFound('Opportunity', params.id);
    return { data: store.viewOpportunity(opportunity) };
  },

  createOpportunity: (ctx) => {
    checkReferences(ctx, { accountId: 'accounts', contactId: 'contacts' });
    const opportunity = ctx.store.insertOpportunity({ ...ctx.body, tenantId: ctx.tenantId, isIntegration: true });
    return { data: ctx.store.viewOpportunity(opportunity) };
  },

  updateOpportunity: (ctx) => {
    const { store, tenantId, params } = ctx;
    const opportunity = store.find(store.opportunities, tenantId, params.id) ?? notFound('Opportunity', params.id);
    checkReferences(ctx, { accountId: 'accounts', contactId: 'contacts' });
    return { data: store.viewOpportunity(store.update(opportunity, ctx.body ?? {})) };
  },

  listActivities: (ctx) => {
    const { store, tenantId, query } = ctx;
    const opportunityId = query.opportunityId as string;
    if (!store.find(store.opportunities, tenantId, opportunityId)) notFound('Opportunity', opportunityId);
    const all = store.activitiesOf('opportunity', opportunityId);
    const filtered =
      query.ownerId === undefined &&
      query.type === undefined &&
      query.fromDate === undefined &&
      query.toDate === undefined
        ? all
        : all.filter(
            (a) =>
              (query.ownerId === undefined || a.ownerId === query.ownerId) &&
              (query.type === undefined || a.type === query.type) &&
              inRange(a, query.fromDate, query.toDate),
          );
    const { items, pagination } = paginate(filtered, ctx);
    return { data: items.map((a) => store.viewActivity(a)), pagination };
  },

  createActivity: (ctx) => {
    const { store, tenantId } = ctx;
    const body = ctx.body ?? {};
    const tables = { opportunity: 'opportunities', account: 'accounts', contact: 'contacts' } as const;
    const table = tables[body.relatedToType as keyof typeof tables];
    if (!store.find(store[table], tenantId, body.relatedToId as string))
      invalidReference('relatedToId', body.relatedToId);
    const activity = store.insertActivity({ ...body, tenantId });
    return { data: store.viewActivity(activity) };
  },

  createAccount: (ctx) => {
    const account = ctx.store.insertAccount({ ...ctx.body, tenantId: ctx.tenantId });
    return { data: ctx.store.viewAccount(account) };
  },

  updateAccount: (ctx) => {
    const { store, tenantId, params } = ctx;
    const account = store.find(store.accounts, tenantId, params.id) ?? notFound('Account', params.id);
    return { data: store.viewAccount(store.update(account, ctx.body ?? {})) };
  },

  createContact: (ctx) => {
    checkReferences(ctx, { accountId: 'accounts' });
    const contact = ctx.store.insertContact({
      ...ctx.body,
      tenantId: ctx.tenantId,
      source: 'integration',
      isIntegration: true,
    });
    return { data: ctx.store.viewContact(contact) };
  },

  updateContact: (ctx) => {
    const { store, tenantId, params } = ctx;
    const contact = store.find(store.contacts, tenantId, params.id) ?? notFound('Contact', params.id);
    checkReferences(ctx, { accountId: 'accounts' });
    return { data: store.viewContact(store.update(contact, ctx.body ?? {})) };
  },

  listContacts: (ctx) => {
    const { store, tenantId, query } = ctx;
    const all = store.contactsOf(tenantId);
    const filtered = query.status === undefined ? all : all.filter((c) => c.status === query.status);
    const { items, pagination } = paginate(filtered, ctx);
    return { data: items.map((c) => store.viewContact(c)), pagination };
  },

  resolveGrant: (ctx) => {
    const grantId = ctx.query.grantId as string;
    const grant = ctx.store.grants.get(grantId);
    if (grant?.tenantId !== ctx.tenantId) notFound('Grant', grantId);
    const { id, ...rest } = grant as NonNullable<typeof grant>;
    return { data: { grantId: id, ...rest } };
  },

  apiKeyStatus: (ctx) => {
    const tenant = ctx.store.tenants.get(ctx.tenantId);
    const key = tenant?.apiKey ?? null;
    return {
      data: {
        tenantId: ctx.tenantId,
        hasKey: key !== null,
        keyPreview: key === null ? null : `${key.slice(0, 8)}…${key.slice(-4)}`,
        createdAt: tenant?.keyCreatedAt ?? null,
        lastUsedAt: tenant?.keyLastUsedAt ?? null,
      },
    };
  },

  generateApiKey: (ctx) => {
    const tenant = ctx.store.tenants.get(ctx.tenantId) ?? ctx.store.addTenant({ id: ctx.tenantId });
    const rotated = tenant.apiKey !== null;
    const bytes = crypto.getRandomValues(new Uint8Array(24));
    // The fake's choice (the spec is silent): a new key replaces the previous one at once.
    tenant.apiKey = `crm_live_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
    tenant.keyCreatedAt = ctx.store.now();
    tenant.keyLastUsedAt = null;
    return { data: { tenantId: ctx.tenantId, apiKey: tenant.apiKey, createdAt: tenant.keyCreatedAt, rotated } };
  },
};
