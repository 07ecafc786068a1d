import type * as z from 'zod/mini';
import { PathId, placeholdersOf } from '../internal/endpoint/path';
import { AccountSchema } from '../schemas/account';
import { ActivitySchema } from '../schemas/activity';
import { NonEmptyString } from '../schemas/common';
import { ContactSchema } from '../schemas/contact';
import { OpportunitySchema } from '../schemas/opportunity';
import { PaginationSchema } from '../schemas/pagination';
import { type Command, commands, jsonSchemaOf, snakeName } from './commands';

/*
 * `crm openapi`: the API as an OpenAPI 3.1 document, written from the command table (the endpoint
 * table, whose rows name the SDK's methods) and the zod schemas' JSON Schema. Nothing here names a row: what the
 * spec says of a row beyond its schemas is on the row (`spec`), so a new row is a new operation. Only the `crm`
 * bin loads this module.
 */

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1), as zod 4 writes it. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** An OpenAPI parameter: a path id, a query field, the tenant, or the `x-tenant-id` header. */
interface OpenApiParameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: JsonSchema;
}

/** A response or request body of JSON. */
interface JsonContent {
  readonly 'application/json': { readonly schema: JsonSchema };
}

/** A response: its description and JSON body. */
interface OpenApiResponse {
  readonly description: string;
  readonly content: JsonContent;
}

/** One endpoint row as an OpenAPI operation. */
export interface OpenApiOperation {
  /** `<namespace>_<method>` in snake case: `opportunities_get`, `api_key_status`. */
  readonly operationId: string;
  readonly summary: string;
  /** The summary, and how the call is authenticated and scoped. */
  readonly description: string;
  readonly tags: readonly [string];
  readonly security: readonly [Partial<Record<SecurityScheme, readonly []>>];
  readonly parameters: readonly OpenApiParameter[];
  readonly requestBody?: { readonly required: true; readonly content: JsonContent };
  /** `200`, and `201` beside it on a POST; `default` for failures. */
  readonly responses: {
    readonly '200': OpenApiResponse;
    readonly '201'?: OpenApiResponse;
    readonly default: OpenApiResponse;
  };
}

type SecurityScheme = 'apiKey' | 'adminBearer';
type HttpMethod = 'get' | 'post' | 'put';

/** The document `crm openapi` prints. */
export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers: readonly [
    { readonly url: '{base_url}'; readonly description: string; readonly variables: { base_url: { default: string } } },
  ];
  readonly tags: readonly { readonly name: string }[];
  readonly paths: Readonly<Record<string, Partial<Record<HttpMethod, OpenApiOperation>>>>;
  readonly components: {
    readonly securitySchemes: Readonly<Record<SecurityScheme, JsonSchema>>;
    readonly schemas: Readonly<Record<string, JsonSchema>>;
  };
}

/** Options of {@link openApiDocument}. */
export interface OpenApiOptions {
  /** `info.version`: the SDK's version, since the document is written from its schemas. */
  readonly version: string;
}

/**
 * Response records with a name, written once under `components.schemas` and `$ref`ed, so that a
 * code generator names their types. A row whose data schema is not here gets it inline. The open
 * objects of the spec's unshown results (grant, key status, ...) are one schema under four names:
 * they stay inline.
 */
const named = new Map<z.ZodMiniType, string>([
  [OpportunitySchema, 'Opportunity'],
  [ActivitySchema, 'Activity'],
  [AccountSchema, 'Account'],
  [ContactSchema, 'Contact'],
  [PaginationSchema, 'Pagination'],
]);

const refTo = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A response schema: a `$ref` to its component when it has a name, else inline. */
function outputOf(schema: z.ZodMiniType): JsonSchema {
  const name = named.get(schema);
  return name ? refTo(name) : jsonSchemaOf(schema, 'output');
}

interface ObjectSchema extends JsonSchema {
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
}

// The pieces below are written anew wherever they go: a document that shared an object between two
// places would be printed by a YAML writer with an anchor and an alias, which some tools refuse.

/** The tenant id, in the query or the body: the spec's "string, min length 1". */
const tenantSchema = () => jsonSchemaOf(NonEmptyString, 'input');

// The spec: "The header x-tenant-id may optionally be sent as an alternative."
const tenantHeader = (): OpenApiParameter => ({
  name: 'x-tenant-id',
  in: 'header',
  required: false,
  description:
    'The tenant id, as an alternative to tenantId (the spec). Which wins when both are sent is not shown by the spec; the SDK sends both, with the same value.',
  schema: tenantSchema(),
});

/**
 * The tenant in the query is required, as the spec's table says ("query, required"), although
 * `x-tenant-id` is "an alternative": the spec shows no call made with the header alone, nor which
 * wins when both are sent, and the SDK always sends both. A document that made it optional would
 * let a generated client send a request the spec does not show working.
 */
const tenantQuery = (required: boolean): OpenApiParameter => ({
  name: 'tenantId',
  in: 'query',
  required,
  description: required
    ? 'The tenant the call is scoped to.'
    : 'The tenant the call is scoped to. The spec does not mark it required here; the SDK always sends it, and `x-tenant-id` too.',
  schema: tenantSchema(),
});

function parametersOf({ endpoint, positional }: Command): OpenApiParameter[] {
  // What the spec's table does not mark required, the row says (src/endpoints.ts).
  const optional = new Set(endpoint.spec?.optional);
  const path = placeholdersOf(endpoint.path).map(
    (name): OpenApiParameter => ({
      name,
      in: 'path',
      required: true,
      description: positional?.description ?? 'An id (min length 1).',
      schema: jsonSchemaOf(PathId, 'input'),
    }),
  );
  const tenant = {
    query: [tenantQuery(!optional.has('tenantId')), tenantHeader()],
    body: [tenantHeader()],
    none: [],
  }[endpoint.tenantIn];
  const query = endpoint.query ? (jsonSchemaOf(endpoint.query, 'input') as ObjectSchema) : {};
  const fields = Object.entries(query.properties ?? {}).map(([name, schema]): OpenApiParameter => {
    const { description = positional?.name === name ? positional.description : undefined, ...rest } = schema as {
      description?: string;
    };
    return {
      name,
      in: 'query',
      required: (query.required?.includes(name) ?? false) && !optional.has(name),
      // A parameter's description goes on the parameter, where generators and viewers read it.
      ...(description === undefined ? {} : { description }),
      // The spec gives grantId no constraint: its min length 1 is the SDK's own check.
      schema: name === 'grantId' ? { type: 'string' } : rest,
    };
  });
  // The tenant comes before the query's own fields, as the SDK writes the query string.
  return [...path, ...tenant.filter((p) => p.in === 'query'), ...fields, ...tenant.filter((p) => p.in === 'header')];
}

/**
 * The JSON body as sent: the body schema's input JSON Schema (its output is the same but where a
 * transform hides it), less the SDK-only fields, plus a required `tenantId` where the tenant goes
 * in the body. Open to other fields, as the SDK is: its `extraBody` sends fields the spec does not
 * show, and a server or mock built from this document must take what the SDK sends.
 */
function requestBodyOf({ endpoint }: Command): JsonSchema | undefined {
  if (!endpoint.body && endpoint.tenantIn !== 'body') return undefined;
  const schema: ObjectSchema = endpoint.body ? jsonSchemaOf(endpoint.body, 'input') : { type: 'object' };
  const dropped = new Set(endpoint.spec?.sdkOnly);
  const properties = Object.entries(schema.properties ?? {}).filter(([field]) => !dropped.has(field));
  const { required: all = [], additionalProperties: _closed, ...rest } = schema;
  const required = all.filter((field) => !dropped.has(field));
  if (endpoint.tenantIn === 'body') {
    properties.unshift(['tenantId', { description: 'The tenant the call is scoped to.', ...tenantSchema() }]);
    required.unshift('tenantId');
  }
  // An empty `required` is left out, as zod leaves it out.
  return { ...rest, properties: Object.fromEntries(properties), ...(required.length ? { required } : {}) };
}

/**
 * The success envelope, from the SDK's own envelope schema, with its records `$ref`ed:
 * `{ success: true, data, pagination }` (`data` an array and `pagination` only on lists).
 */
function envelopeOf({ endpoint }: Command): JsonSchema {
  const envelope = jsonSchemaOf(endpoint.envelope, 'output') as ObjectSchema;
  const data = outputOf(endpoint.data);
  const properties = {
    ...envelope.properties,
    success: { description: 'True: the call succeeded.', ...envelope.properties?.success },
    data: endpoint.list
      ? { description: 'The records of this page.', type: 'array', items: data }
      : { description: 'The result of the call.', ...data },
    ...(endpoint.list
      ? { pagination: { description: 'Where this page lies in the list.', ...outputOf(PaginationSchema) } }
      : {}),
  };
  return { ...envelope, properties };
}

/** How a call is authenticated and scoped, in words, for the operation's description. */
function accessOf({ auth, tenantIn }: Command['endpoint']): string {
  if (auth === 'admin') return "Needs a tenant administrator's bearer token; the tenant is the token's.";
  const where = tenantIn === 'body' ? 'in the body' : 'in the query';
  return `Needs the tenant's integration API key (x-api-key) and the tenant: tenantId ${where}, and x-tenant-id.`;
}

const json = (schema: JsonSchema): JsonContent => ({ 'application/json': { schema } });

const success = (command: Command, description: string) => ({ description, content: json(envelopeOf(command)) });

function operationOf(command: Command): OpenApiOperation {
  const { namespace, summary, endpoint } = command;
  const body = requestBodyOf(command);
  return {
    operationId: snakeName(command),
    summary,
    description: `${summary} ${accessOf(endpoint)}`,
    tags: [namespace],
    security: [endpoint.auth === 'admin' ? { adminBearer: [] } : { apiKey: [] }],
    parameters: parametersOf(command),
    ...(body ? { requestBody: { required: true, content: json(body) } as const } : {}),
    // The spec shows no success codes (its responses are labelled only as default). The codes named
    // are those a server sends, as the fake does: 200, and 201 on a POST (which may also answer
    // 200). Not `2XX`: generators such as orval write it into TypeScript as a status literal.
    responses: {
      ...(endpoint.method === 'POST' ? { '201': success(command, 'Created: the envelope, with `success` true.') } : {}),
      '200': success(command, 'Success: the envelope, with `success` true.'),
      default: {
        description:
          'A failure. The spec shows neither the error body nor which status codes follow which failure; responses are JSON.',
        content: json({}),
      },
    },
  };
}

/**
 * The API as an OpenAPI 3.1 document: every row of the endpoint table as an operation, with its
 * parameters, tenant, request body, success envelope and security scheme, from the SDK's zod
 * schemas. Plain data: `JSON.stringify()` of it is the same on every call.
 */
export function openApiDocument({ version }: OpenApiOptions): OpenApiDocument {
  const paths: Record<string, Partial<Record<HttpMethod, OpenApiOperation>>> = {};
  for (const command of commands) {
    const path = `/${command.endpoint.path}`;
    paths[path] = { ...paths[path], [command.endpoint.method.toLowerCase() as HttpMethod]: operationOf(command) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'CRM external integration API',
      version,
      description:
        'Written by crm-integration-sdk from its endpoint table and zod schemas: what the SDK sends, and what it accepts back. Where the spec shows nothing (error bodies, status codes, most result fields), neither does this document.',
    },
    // The variable is described in the server's description, not its own: swagger-parser's schema
    // of OpenAPI 3.1 refuses a server variable's `description`, and many pipelines run it first.
    servers: [
      {
        url: '{base_url}',
        description:
          "The root address of the external API, the spec's {base_url}; its default, https://crm.example.com, is a placeholder.",
        variables: { base_url: { default: 'https://crm.example.com' } },
      },
    ],
    tags: [...new Set(commands.map((c) => c.namespace))].map((name) => ({ name })),
    paths: nullableAsTypes(paths),
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: "The tenant's integration API key." },
        adminBearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "A tenant administrator's token, for key management.",
        },
      },
      schemas: nullableAsTypes(
        Object.fromEntries([...named].map(([schema, name]) => [name, jsonSchemaOf(schema, 'output')])),
      ),
    },
  };
}

/**
 * `anyOf: [X, { type: 'null' }]`, where X has one type, written as X with `type: [t, 'null']`: the
 * same schema, which Prism's dynamic mock can fake (an `anyOf` of an array and null makes it
 * answer 500) and which generators read as plainly.
 */
function nullableAsTypes<T>(value: T): T {
  if (Array.isArray(value)) return value.map(nullableAsTypes) as T;
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).map(([key, inner]) => [key, nullableAsTypes(inner)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  const { anyOf, ...rest } = object;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return object as T;
  const [first, second] = anyOf as [Record<string, unknown>, Record<string, unknown>];
  const isNull = (s: Record<string, unknown>) => s.type === 'null' && Object.keys(s).length === 1;
  const other = isNull(second) ? first : isNull(first) ? second : undefined;
  if (!other || typeof other.type !== 'string' || 'anyOf' in other) return object as T;
  return { ...rest, ...other, type: [other.type, 'null'] } as T;
}
