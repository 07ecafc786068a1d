import { createRequire } from 'node:module';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect, test } from 'vitest';
import { commands, type EndpointName } from '../../src/cli/commands';
import { type JsonSchema, type OpenApiDocument, openApiDocument } from '../../src/cli/openapi';
import { CrmClient } from '../../src/index';
import { FakeCrmCore } from '../../src/testing/index';

/*
 * The document against the wire: every endpoint called once through the SDK against the fake CRM,
 * and each request the SDK sent and each answer the fake gave checked against the document's
 * schemas.
 */

/** What the test asks of ajv. */
interface Ajv {
  compile(schema: object): unknown;
  validate(schema: object, data: unknown): boolean;
  errorsText(): string;
}
// ajv is the OpenAPI validator's dependency, not the package's: it is loaded from where the
// validator is, so the test adds no dependency and finds ajv however npm laid the tree out.
const fromValidator = createRequire(createRequire(import.meta.url).resolve('@seriousme/openapi-schema-validator'));
const { Ajv2020 } = fromValidator('ajv/dist/2020.js') as { Ajv2020: new (options: object) => Ajv };

/** The document with its $refs resolved, so each schema compiles on its own. */
async function resolvedDocument(): Promise<OpenApiDocument> {
  const validator = new Validator();
  const result = await validator.validate(openApiDocument({ version: '0.0.0' }) as unknown as Record<string, unknown>);
  expect(result.valid, JSON.stringify(result.errors, null, 2)).toBe(true);
  return validator.resolveRefs() as unknown as OpenApiDocument;
}

/** Every endpoint, called once, in an order where each finds what it needs. */
async function callEveryEndpoint(fake: FakeCrmCore, fetch: typeof globalThis.fetch): Promise<void> {
  const admin = new CrmClient({ baseUrl: fake.baseUrl, adminToken: fake.adminToken, fetch });
  await admin.apiKey.status();
  await admin.apiKey.generate();
  const crm = new CrmClient({ ...fake.credentials, fetch });
  const account = await crm.accounts.create({ name: 'Acme Ltd', status: 'prospect' });
  await crm.accounts.update(account.id, { country: 'GB' });
  const contact = await crm.contacts.create({ accountId: account.id, firstName: 'Ada', email: 'ada@acme.test' });
  await crm.contacts.update(contact.id, { lastName: 'Lovelace', isPrimary: true });
  await crm.contacts.list({ status: 'active', limit: 10 });
  const opportunity = await crm.opportunities.create({
    name: 'Renewal',
    accountId: account.id,
    expectedCloseDate: new Date('2027-01-31T00:00:00Z'),
  });
  await crm.opportunities.get(opportunity.id);
  await crm.opportunities.update(opportunity.id, { amount: 12_000, type: 'renewal' });
  await crm.activities.create({ opportunityId: opportunity.id, type: 'call', subject: 'Discovery' });
  await crm.activities.list({ opportunityId: opportunity.id, page: 1, fromDate: '2020-01-01T00:00:00Z' });
  await crm.grants.resolve('grant_demo');
}

test("every schema of the document compiles in ajv's strict JSON Schema 2020-12 mode", async () => {
  const document = await resolvedDocument();
  const ajv = new Ajv2020({ strict: true, formats: { 'date-time': true, email: true } });
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
  const schemas = [
    ...Object.values(document.components.schemas),
    ...operations.flatMap((o) => [
      ...o.parameters.map((p) => p.schema),
      ...(o.requestBody ? [o.requestBody.content['application/json'].schema] : []),
      o.responses['200'].content['application/json'].schema,
      o.responses.default.content['application/json'].schema,
    ]),
  ];
  expect(schemas.length).toBeGreaterThan(13 * 3);
  for (const schema of schemas) expect(() => ajv.compile(schema)).not.toThrow();
});

/** A query string's value as its schema types it: the wire carries text. */
const typed = (value: string, schema: JsonSchema) =>
  schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;

test('what the SDK sends to the fake CRM and what it answers fit the document, for every endpoint', async () => {
  const document = await resolvedDocument();
  const fake = new FakeCrmCore();
  const answers: unknown[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await fake.handle(new Request(input, init));
    answers.push(await response.clone().json());
    return response;
  };
  await callEveryEndpoint(fake, fetch);

  const ajv = new Ajv2020({ strict: true, formats: { 'date-time': true, email: true } });
  const byName = new Map(commands.map((c) => [c.name, c]));
  const called = new Set<EndpointName>();
  fake.requests.forEach((request, i) => {
    const command = request.endpoint ? byName.get(request.endpoint) : undefined;
    if (!command) throw new Error(`The fake matched no endpoint for ${request.method} ${request.path}`);
    called.add(command.name);
    const where = `${command.name} (${request.status})`;
    expect(request.status, where).toBeLessThan(300);
    const { path, method } = command.endpoint;
    const operation = document.paths[`/${path}`]?.[method.toLowerCase() as 'get' | 'post' | 'put'];
    if (!operation) throw new Error(`No operation in the document for ${where}`);

    // The query: every parameter sent is in the document and fits its schema; every required one is sent.
    const query = operation.parameters.filter((p) => p.in === 'query');
    expect(
      Object.keys(request.query).filter((name) => !query.some((p) => p.name === name)),
      where,
    ).toEqual([]);
    for (const p of query) {
      const value = request.query[p.name];
      if (value === undefined) expect(p.required, `${where}: ${p.name} not sent`).toBe(false);
      else expect(ajv.validate(p.schema, typed(value, p.schema)), `${where}: ${p.name}=${value}`).toBe(true);
    }
    // The tenant header: sent exactly where the document declares it.
    const declared = operation.parameters.some((p) => p.in === 'header' && p.name === 'x-tenant-id');
    expect('x-tenant-id' in request.headers, `${where}: x-tenant-id`).toBe(declared);
    // The body, and the answer.
    const body = operation.requestBody?.content['application/json'].schema;
    expect(body === undefined, `${where}: a body in the document, and one sent`).toBe(request.body === undefined);
    if (body) expect(ajv.validate(body, request.body), `${where}: ${ajv.errorsText()}`).toBe(true);
    const answer = (operation.responses[request.method === 'POST' ? '201' : '200'] ?? operation.responses['200'])
      .content['application/json'].schema;
    expect(ajv.validate(answer, answers[i]), `${where}: ${ajv.errorsText()}`).toBe(true);
  });
  expect([...called].sort()).toEqual(commands.map((c) => c.name).sort());
});
