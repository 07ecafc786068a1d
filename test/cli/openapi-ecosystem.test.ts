import { expect, test } from 'vitest';
import { openApiDocument } from '../../src/cli/openapi';

/*
 * What the tools users run on `crm openapi` need of the document (issue 28): each test names the
 * tool that failed on the document before. `npm run check` runs the tools themselves
 * (scripts/check-openapi-tools.mjs); these hold the document to it without them.
 */

const document = openApiDocument({ version: '1.2.3' });
const json = JSON.stringify(document);

/** Every object in a value, depth first, with the path to it. */
function* objects(value: unknown, path = '#'): Generator<[string, Record<string, unknown>]> {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value)) yield [path, value as Record<string, unknown>];
  for (const [key, child] of Object.entries(value)) yield* objects(child, `${path}/${key}`);
}

const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
const schemas = document.components.schemas as Record<string, { properties: Record<string, Record<string, unknown>> }>;

test('no success response is 2XX, which orval writes into TypeScript as a status: 200, and 201 beside it on creates', () => {
  expect(json).not.toContain('2XX');
  for (const operation of operations) expect(operation.responses['200']).toBeDefined();
});

test('no anyOf pairs a type with null, which makes Prism’s dynamic mock answer 500: type lists say it', () => {
  const pairs = [...objects(document)].filter(
    ([, node]) => Array.isArray(node.anyOf) && node.anyOf.some((s) => (s as { type?: unknown }).type === 'null'),
  );
  expect(pairs.map(([path]) => path)).toEqual([]);
  expect(schemas.Opportunity?.properties.associatedContacts).toMatchObject({ type: ['array', 'null'] });
});

test('no server variable has a description, which swagger-parser refuses: the server’s own says it', () => {
  for (const server of document.servers) {
    for (const variable of Object.values(server.variables)) expect(variable).not.toHaveProperty('description');
    expect(server.description).toContain('{base_url}');
  }
});

test('no request body is closed to fields it does not list, since extraBody sends them', () => {
  for (const operation of operations) {
    const body = operation.requestBody?.content['application/json'].schema;
    if (body) expect(body).not.toHaveProperty('additionalProperties');
  }
});

test('response enums name the spec’s values and stay open to others', () => {
  const open = (values: string[]) => ({
    anyOf: [{ type: 'string', enum: values }, { type: ['string', 'null'] }],
  });
  expect(schemas.Opportunity?.properties.type).toMatchObject(
    open(['new_business', 'existing_business', 'upsell', 'renewal']),
  );
  expect(schemas.Activity?.properties.type).toMatchObject(
    open(['call', 'meeting', 'email', 'task', 'note', 'whatsapp']),
  );
  expect(schemas.Activity?.properties.relatedToType).toMatchObject(open(['account', 'contact', 'opportunity']));
  expect(schemas.Contact?.properties.status).toMatchObject(open(['active', 'inactive']));
  expect(schemas.Account?.properties.status).toMatchObject(open(['active', 'inactive', 'prospect']));
});

test('activity date-times are date-times and pagination fields integers, as the spec types them', () => {
  for (const field of ['activityDate', 'createdAt', 'updatedAt']) {
    expect(schemas.Activity?.properties[field]).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
  }
  // The spec gives no format for the dates of the other records.
  expect(schemas.Opportunity?.properties.createdAt).not.toHaveProperty('format');
  for (const field of ['page', 'limit', 'total', 'pages']) {
    expect(schemas.Pagination?.properties[field]).toMatchObject({ type: ['integer', 'null'] });
  }
});

test('tenantId is required only where the spec requires it: not on update contact (row 9) nor list contacts (row 10)', () => {
  const tenant = (path: string, method: 'get' | 'put') =>
    document.paths[path]?.[method]?.parameters.find((p) => p.name === 'tenantId')?.required;
  expect(tenant('/integrations/v1/contacts', 'get')).toBe(false);
  expect(tenant('/integrations/v1/contacts/{id}', 'put')).toBe(false);
  expect(tenant('/integrations/v1/accounts/{id}', 'put')).toBe(true);
  expect(tenant('/integrations/v1/activities', 'get')).toBe(true);
});

test('grantId is the spec’s: a query parameter not marked required, with no constraint the spec does not give', () => {
  const grantId = document.paths['/integrations/v1/grants/resolve']?.get?.parameters.find((p) => p.name === 'grantId');
  expect(grantId).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
  expect(grantId?.description).toContain('grantId');
});

test('every property and parameter is described', () => {
  const undescribed: string[] = [];
  for (const [path, node] of objects(document)) {
    if (path.endsWith('/properties')) {
      for (const [name, schema] of Object.entries(node)) {
        if (typeof (schema as { description?: unknown }).description !== 'string') undescribed.push(`${path}/${name}`);
      }
    }
  }
  for (const operation of operations) {
    for (const p of operation.parameters) if (!p.description) undescribed.push(`${operation.operationId}: ${p.name}`);
  }
  expect(undescribed).toEqual([]);
});
