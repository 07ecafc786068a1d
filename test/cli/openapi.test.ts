import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, test } from 'vitest';
import { type Command, commands, jsonSchemaOf } from '../../src/cli/commands';
import { type JsonSchema, type OpenApiDocument, type OpenApiOperation, openApiDocument } from '../../src/cli/openapi';
import { endpoints } from '../../src/endpoints';
import type { Endpoint } from '../../src/internal/endpoint/define';
import { placeholdersOf } from '../../src/internal/endpoint/path';

/* `crm openapi`: the document is valid OpenAPI 3.1 and says, row by row, what the endpoint table says. */

const document = openApiDocument({ version: '1.2.3' });

/** The document as the validator resolves it: every `$ref` replaced by its target. */
async function resolve(): Promise<OpenApiDocument> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
  expect(result.valid, JSON.stringify(result.errors, null, 2)).toBe(true);
  return validator.resolveRefs() as unknown as OpenApiDocument;
}
let resolving: Promise<OpenApiDocument> | undefined;
/** The resolved document, once for the file. */
const resolved = () => {
  resolving ??= resolve();
  return resolving;
};

const operationOf = (doc: OpenApiDocument, { endpoint }: Command): OpenApiOperation | undefined =>
  doc.paths[`/${endpoint.path}`]?.[endpoint.method.toLowerCase() as 'get' | 'post' | 'put'];

/** zod's JSON Schema without the `$schema` keyword, as the document holds it. */
const bare = (schema: JsonSchema): JsonSchema => {
  const { $schema: _, ...rest } = schema;
  return rest;
};

/**
 * A response schema reduced to what the SDK accepts: descriptions, formats and enums' documented
 * values dropped, `integer` read as `number`, and `type: [t, 'null']` as the `anyOf` zod writes.
 */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== 'object' || value === null) return value;
  const { description: _d, format: _f, ...rest } = value as Record<string, unknown>;
  const object = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, plain(v)])) as Record<string, unknown>;
  const { anyOf } = object;
  if (Array.isArray(anyOf) && anyOf.length === 2 && (anyOf[0] as { enum?: unknown }).enum) {
    const { anyOf: _, ...others } = object;
    return { ...others, ...(anyOf[1] as object) };
  }
  if (object.type === 'integer') object.type = 'number';
  if (Array.isArray(object.type)) {
    const types = object.type.map((t) => (t === 'integer' ? 'number' : t));
    const { type: _, ...others } = object;
    if (
      types.length === 2 &&
      types[1] === 'null' &&
      types[0] !== 'string' &&
      types[0] !== 'number' &&
      types[0] !== 'boolean'
    )
      return { anyOf: [{ ...others, type: types[0] }, { type: 'null' }] };
    object.type = types;
  }
  return object;
}

interface ObjectSchema {
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** Every object and array in a value, depth first, with the path to it. */
function* nodes(value: unknown, path = '#'): Generator<[string, object]> {
  if (typeof value !== 'object' || value === null) return;
  yield [path, value];
  for (const [key, child] of Object.entries(value)) yield* nodes(child, `${path}/${key}`);
}

test('the document passes the OpenAPI 3.1 validator', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
  expect(result.valid, JSON.stringify(result.errors, null, 2)).toBe(true);
  expect(validator.version).toBe('3.1');
});

test('it has one operation per row of the endpoint table: 13', () => {
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
  expect(operations).toHaveLength(Object.keys(endpoints).length);
  expect(operations).toHaveLength(13);
  expect(new Set(operations.map((o) => o.operationId)).size).toBe(13);
});

test('the same document comes out on every call, and its JSON reads back as the same document', () => {
  const text = JSON.stringify(openApiDocument({ version: '1.2.3' }));
  expect(JSON.stringify(openApiDocument({ version: '1.2.3' }))).toBe(text);
  expect(JSON.parse(text)).toEqual(document);
  expect(document.info.version).toBe('1.2.3');
});

test('no object is shared between two places, so a YAML writer needs no anchors', () => {
  const seen = new Set<object>();
  for (const [path, node] of nodes(document)) {
    expect(seen.has(node), path).toBe(false);
    seen.add(node);
  }
});

test('every $ref points at a component, and every component is referenced', () => {
  const refs = [...nodes(document)].flatMap(([, node]) => ('$ref' in node ? [String(node.$ref)] : []));
  const components = Object.keys(document.components.schemas);
  for (const ref of refs) expect(components.map((name) => `#/components/schemas/${name}`)).toContain(ref);
  expect(new Set(refs)).toEqual(new Set(components.map((name) => `#/components/schemas/${name}`)));
  expect(components).toEqual(['Opportunity', 'Activity', 'Account', 'Contact', 'Pagination']);
});

test('no schema carries $schema, $defs, $id or definitions, which belong to a standalone JSON Schema', () => {
  for (const [path, node] of nodes(document)) {
    for (const keyword of ['$schema', '$defs', '$id', 'definitions']) expect(keyword in node, path).toBe(false);
  }
});

test("the fields a row says the SDK does not send are fields of its input, and those it says the spec leaves optional are its query's or the tenant", () => {
  for (const endpoint of Object.values(endpoints) as Endpoint[]) {
    const { sdkOnly = [], optional = [] } = endpoint.spec ?? {};
    const body = endpoint.body ? (jsonSchemaOf(endpoint.body, 'input') as ObjectSchema) : {};
    for (const field of sdkOnly) expect(Object.keys(body.properties ?? {})).toContain(field);
    const query = endpoint.query ? (jsonSchemaOf(endpoint.query, 'input') as ObjectSchema) : {};
    for (const field of optional) expect([...Object.keys(query.properties ?? {}), 'tenantId']).toContain(field);
  }
});

test('only the rows whose facts say so leave out the SDK-only fields and mark a required field optional', () => {
  const facts = Object.fromEntries(
    Object.entries(endpoints).flatMap(([name, endpoint]) =>
      (endpoint as Endpoint).spec ? [[name, (endpoint as Endpoint).spec]] : [],
    ),
  );
  expect(facts).toEqual({
    createActivity: { sdkOnly: ['opportunityId'] },
    updateContact: { optional: ['tenantId'] },
    listContacts: { optional: ['tenantId'] },
    resolveGrant: { optional: ['grantId'] },
  });
});

describe.each(commands.map((command) => [command.name, command] as const))('row %s', (_name, command) => {
  const { endpoint } = command;
  const operation = () => {
    const found = operationOf(document, command);
    if (!found) throw new Error(`No ${endpoint.method} /${endpoint.path} in the document`);
    return found;
  };
  const parameter = (name: string, where: string) =>
    operation().parameters.find((p) => p.name === name && p.in === where);

  test('is an operation at its path and method, named <namespace>_<method> and tagged with its namespace', () => {
    const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    expect(operation()).toMatchObject({
      operationId: `${snake(command.namespace)}_${snake(command.method)}`,
      summary: command.summary,
      tags: [command.namespace],
    });
    expect(document.tags).toContainEqual({ name: command.namespace });
  });

  test("takes each of its path's placeholders as a required, non-empty path parameter", () => {
    const ids = placeholdersOf(endpoint.path);
    expect(operation().parameters.filter((p) => p.in === 'path')).toEqual(
      ids.map((name) => ({
        name,
        in: 'path',
        required: true,
        description: expect.stringMatching(/^The id of the (opportunity|account|contact) \(min length 1\)\.$/),
        schema: { type: 'string', minLength: 1 },
      })),
    );
  });

  test('takes the tenant where the row puts it, and x-tenant-id as an optional alternative', () => {
    const tenantId = parameter('tenantId', 'query');
    const header = parameter('x-tenant-id', 'header');
    const body = operation().requestBody?.content['application/json'].schema as ObjectSchema | undefined;
    if (endpoint.tenantIn === 'none') {
      expect(tenantId).toBeUndefined();
      expect(header).toBeUndefined();
      expect(body?.properties?.tenantId).toBeUndefined();
      return;
    }
    expect(header).toMatchObject({ required: false, schema: { type: 'string', minLength: 1 } });
    if (endpoint.tenantIn === 'query') {
      // Required where the spec's table says so: not on rows 9 ("see note") and 10 ("query"), as their rows say.
      const required = !endpoint.spec?.optional?.includes('tenantId');
      expect(tenantId).toMatchObject({ required, schema: { type: 'string', minLength: 1 } });
      expect(body?.properties?.tenantId).toBeUndefined();
    } else {
      expect(tenantId).toBeUndefined();
      expect(body?.properties?.tenantId).toMatchObject({ type: 'string', minLength: 1 });
      expect(body?.required).toContain('tenantId');
    }
  });

  test("takes its query schema's fields as query parameters, required as the schema says unless the spec does not", () => {
    const query = endpoint.query ? (jsonSchemaOf(endpoint.query, 'input') as ObjectSchema) : {};
    const fields = Object.entries(query.properties ?? {}).map(([name, { description, ...schema }]) => ({
      name,
      in: 'query',
      required: (query.required?.includes(name) ?? false) && !endpoint.spec?.optional?.includes(name),
      description: description ?? expect.any(String),
      // The spec gives grantId no constraint: the SDK's own min length stays out.
      schema: name === 'grantId' ? { type: 'string' } : schema,
    }));
    const others = operation().parameters.filter((p) => p.in === 'query' && p.name !== 'tenantId');
    expect(others).toEqual(fields);
  });

  test('has a required JSON body exactly when it sends one: its body schema, less the fields the SDK does not send', () => {
    const requestBody = operation().requestBody;
    if (!endpoint.body && endpoint.tenantIn !== 'body') {
      expect(requestBody).toBeUndefined();
      return;
    }
    expect(requestBody?.required).toBe(true);
    const sent = requestBody?.content['application/json'].schema as ObjectSchema;
    const zod = endpoint.body ? (jsonSchemaOf(endpoint.body, 'input') as ObjectSchema) : {};
    const dropped = endpoint.spec?.sdkOnly ?? [];
    const tenant = endpoint.tenantIn === 'body' ? ['tenantId'] : [];
    const expected = Object.keys(zod.properties ?? {}).filter((f) => !dropped.includes(f));
    expect(Object.keys(sent.properties ?? {})).toEqual([...tenant, ...expected]);
    expect(sent.required ?? []).toEqual([...tenant, ...(zod.required ?? []).filter((f) => !dropped.includes(f))]);
    for (const field of expected) expect(sent.properties?.[field]).toEqual(zod.properties?.[field]);
    // Open to the fields of `extraBody`, which the spec does not show and the SDK sends.
    expect(sent).not.toHaveProperty('additionalProperties');
  });

  test('is secured by the API key or by the admin bearer token, as its auth says', () => {
    expect(operation().security).toEqual([endpoint.auth === 'admin' ? { adminBearer: [] } : { apiKey: [] }]);
  });

  test("answers success with the SDK's envelope (an array and pagination for lists), and failure unshown", async () => {
    const responses = operation().responses;
    // The codes a server sends, as the fake does; no `2XX`, which orval writes into TypeScript.
    expect(Object.keys(responses)).toEqual(endpoint.method === 'POST' ? ['200', '201', 'default'] : ['200', 'default']);
    expect(responses.default.content['application/json'].schema).toEqual({});
    if (responses['201']) expect(responses['201']).toEqual({ ...responses['200'], description: expect.any(String) });
    const envelope = responses['200'].content['application/json'].schema as ObjectSchema;
    expect(envelope.required).toEqual(endpoint.list ? ['success', 'data', 'pagination'] : ['success', 'data']);
    expect(envelope.properties?.success).toMatchObject({ type: 'boolean', const: true });
    if (endpoint.list) expect(envelope.properties?.data).toMatchObject({ type: 'array' });
    // With its $refs resolved, the schema is the one zod writes for the envelope the SDK checks.
    // less the descriptions and spec's values (open enums, formats, integers) laid over it.
    const full = operationOf(await resolved(), command)?.responses['200'].content['application/json'].schema;
    expect(plain(full as JsonSchema)).toEqual(plain(bare(jsonSchemaOf(endpoint.envelope, 'output'))));
  });
});
