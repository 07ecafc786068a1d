import * as z from 'zod/mini';
import { endpoints } from '../endpoints';
import type { Endpoint } from '../internal/endpoint/define';
import { placeholdersOf } from '../internal/endpoint/path';

/** The name of a row of the endpoint table (`getOpportunity`, ...). */
export type EndpointName = keyof typeof endpoints;

/**
 * What the table does not hold: the SDK's name of each endpoint (`crm.<namespace>.<method>()`)
 * and the spec's words for it. Keyed by every row, so a new row does not compile until it is
 * named here, and then it is a command, an OpenAPI operation and an MCP tool.
 */
// biome-ignore format: one line per row, as in the endpoint table
const names = {
  getOpportunity: { namespace: 'opportunities', method: 'get', summary: 'Reads an opportunity by id.' },
  createOpportunity: { namespace: 'opportunities', method: 'create', summary: 'Creates an opportunity.' },
  updateOpportunity: { namespace: 'opportunities', method: 'update', summary: 'Updates an opportunity; every field is optional.' },
  listActivities: { namespace: 'activities', method: 'list', summary: 'Lists the activities of an opportunity, a page at a time.' },
  createActivity: { namespace: 'activities', method: 'create', summary: 'Creates an activity; integrations relate it to an opportunity.' },
  createAccount: { namespace: 'accounts', method: 'create', summary: 'Creates an account.' },
  updateAccount: { namespace: 'accounts', method: 'update', summary: 'Updates an account; every field is optional. The result\'s fields are not shown by the spec.' },
  createContact: { namespace: 'contacts', method: 'create', summary: 'Creates a contact.' },
  updateContact: { namespace: 'contacts', method: 'update', summary: 'Updates a contact.' },
  listContacts: { namespace: 'contacts', method: 'list', summary: 'Lists contacts, a page at a time, optionally by status.' },
  resolveGrant: { namespace: 'grants', method: 'resolve', summary: 'Resolves a grant by its grantId. The result\'s fields are not shown by the spec.' },
  apiKeyStatus: { namespace: 'apiKey', method: 'status', summary: 'Reads the state of the tenant\'s integration API key (administrator token).' },
  generateApiKey: { namespace: 'apiKey', method: 'generate', summary: 'Generates or rotates the tenant\'s integration API key (administrator token).' },
} as const satisfies Record<EndpointName, { namespace: string; method: string; summary: string }>;

/** A JSON Schema object as zod 4 writes it, narrowed to what the command line reads. */
export interface FieldSchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
}

/** One field of a command's input: a flag on the command line, a property of an MCP tool's input. */
export interface Field {
  /** As the SDK names it: `accountId`. */
  readonly name: string;
  /** As the command line names it: `account-id`. */
  readonly flag: string;
  readonly required: boolean;
  readonly schema: FieldSchema;
}

/** One endpoint as a command: `crm <namespace> <method> [id] [flags]`. */
export interface Command {
  /** The row's name in the endpoint table. */
  readonly name: EndpointName;
  readonly endpoint: Endpoint;
  /** As in the SDK: `opportunities`, `apiKey`. */
  readonly namespace: string;
  /** As in the SDK: `get`, `list`. */
  readonly method: string;
  /** The spec's words for it. */
  readonly summary: string;
  /**
   * The value given as the positional argument: the path's placeholder (`id`), or the one field of
   * a query that has just one, required (`grantId`). It is the SDK method's first argument.
   */
  readonly positional: { readonly name: string; readonly in: 'path' | 'query' } | undefined;
  /** Where the other fields go (the SDK method's input object), or undefined when there are none. */
  readonly inputIn: 'query' | 'body' | undefined;
  /** The input object's fields, in the schema's order (the positional is not among them). */
  readonly fields: readonly Field[];
  /** GET reads; anything else writes. */
  readonly writes: boolean;
  /** A list: `data` is a page of records. */
  readonly list: boolean;
}

/** `accountId` -> `account-id`, `apiKey` -> `api-key`. */
export const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

interface ObjectSchema {
  readonly properties?: Readonly<Record<string, FieldSchema>>;
  readonly required?: readonly string[];
}

/**
 * A schema as JSON Schema: what callers send (`input`) or what the SDK returns (`output`).
 * Without zod's top-level `$schema`: every use embeds it (a flag, an OpenAPI document, an MCP
 * tool's property), where that keyword has no place.
 */
export function jsonSchemaOf(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function fieldsOf(schema: z.ZodMiniType | undefined): Field[] {
  if (!schema) return [];
  const { properties = {}, required = [] } = jsonSchemaOf(schema, 'input') as ObjectSchema;
  return Object.entries(properties).map(([name, field]) => ({
    name,
    flag: kebab(name),
    required: required.includes(name),
    schema: field,
  }));
}

function commandOf(name: EndpointName): Command {
  const endpoint: Endpoint = endpoints[name];
  const { namespace, method, summary } = names[name];
  const inputIn = endpoint.body ? 'body' : endpoint.query ? 'query' : undefined;
  let fields = fieldsOf(inputIn === 'body' ? endpoint.body : endpoint.query);
  const [placeholder] = placeholdersOf(endpoint.path);
  let positional: Command['positional'];
  if (placeholder) positional = { name: placeholder, in: 'path' };
  else if (inputIn === 'query' && fields.length === 1 && fields[0]?.required) {
    positional = { name: fields[0].name, in: 'query' };
    fields = [];
  }
  return {
    name,
    endpoint,
    namespace,
    method,
    summary,
    positional,
    inputIn: fields.length ? inputIn : undefined,
    fields,
    writes: endpoint.method !== 'GET',
    list: endpoint.list === true,
  };
}

/** Every endpoint as a command, in the table's order. */
export const commands: readonly Command[] = (Object.keys(endpoints) as EndpointName[]).map(commandOf);

/** How an OpenAPI operation and an MCP tool name a command: `api_key_status`, `contacts_list`. */
export const snakeName = (command: Command): string =>
  `${kebab(command.namespace)}_${kebab(command.method)}`.replaceAll('-', '_');

/** How the command line spells a command: `api-key status`. */
export const words = (command: Command): string => `${kebab(command.namespace)} ${kebab(command.method)}`;

/** Key management: never an MCP tool. */
export const isKeyManagement = (command: Command): boolean => command.endpoint.auth === 'admin';
