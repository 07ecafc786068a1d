import * as z from 'zod/mini';
import { endpoints } from '../endpoints';
import type { Endpoint } from '../internal/endpoint/define';
import { placeholdersOf } from '../internal/endpoint/path';
import { withFieldDocs } from './field-docs';
import { endpointSummaries } from './field-docs.generated';

/** The name of a row of the endpoint table (`getOpportunity`, ...). */
export type EndpointName = keyof typeof endpoints;

/** A JSON Schema object as zod 4 writes it, narrowed to what the command line reads. */
export interface FieldSchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly description?: string;
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
  /** As in the SDK, from the row's `sdkMethod`: `opportunities`, `apiKey`. */
  readonly namespace: string;
  /** As in the SDK, from the row's `sdkMethod`: `get`, `list`. */
  readonly method: string;
  /** The spec's words for it: the row's `summary`. */
  readonly summary: string;
  /**
   * The value given as the positional argument: the path's placeholder (`id`), or the one field of
   * a query that has just one, required (`grantId`). It is the SDK method's first argument.
   */
  readonly positional:
    | { readonly name: string; readonly in: 'path' | 'query'; readonly description: string }
    | undefined;
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
 * A schema as JSON Schema: what callers send (`input`) or what the SDK returns (`output`), each
 * property described by the TSDoc of its field (field-docs.ts).
 * Without zod's top-level `$schema`: every use embeds it (a flag, an OpenAPI document, an MCP
 * tool's property), where that keyword has no place.
 */
export function jsonSchemaOf(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return withFieldDocs(schema, rest, io);
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
  // The row names it once: `contacts.list` is `crm.contacts.list()`, and the command `crm contacts list`.
  const [namespace, method] = endpoint.sdkMethod.split('.') as [string, string];
  const inputIn = endpoint.body ? 'body' : endpoint.query ? 'query' : undefined;
  let fields = fieldsOf(inputIn === 'body' ? endpoint.body : endpoint.query);
  const [placeholder] = placeholdersOf(endpoint.path);
  let positional: Command['positional'];
  if (placeholder) {
    // `opportunities` -> `opportunity`: the record the path names.
    const record = namespace.replace(/ies$/, 'y').replace(/s$/, '');
    positional = { name: placeholder, in: 'path', description: `The id of the ${record} (min length 1).` };
  } else if (inputIn === 'query' && fields.length === 1 && fields[0]?.required) {
    // The one such field is `grantId`; the spec: "A grant is identified by a grantId supplied as a query parameter."
    positional = {
      name: fields[0].name,
      in: 'query',
      description:
        fields[0].schema.description ?? `The ${fields[0].name} to look up, identified as the spec says (min length 1).`,
    };
    fields = [];
  }
  return {
    name,
    endpoint,
    namespace,
    method,
    summary: endpointSummaries[name] as string,
    positional,
    inputIn: fields.length ? inputIn : undefined,
    fields,
    writes: endpoint.method !== 'GET',
    list: endpoint.list === true,
  };
}

/** Every endpoint as a command, in the table's order. */
export const commands: readonly Command[] = (Object.keys(endpoints) as EndpointName[]).map(commandOf);

/** How an OpenAPI operation and an MCP tool name a command, from its row's `sdkMethod`: `api_key_status`, `contacts_list`. */
export const snakeName = (command: Command): string => kebab(command.endpoint.sdkMethod).replace(/[-.]/g, '_');

/** How the command line spells a command: `api-key status`. */
export const words = (command: Command): string => `${kebab(command.namespace)} ${kebab(command.method)}`;

/** Key management: never an MCP tool. */
export const isKeyManagement = (command: Command): boolean => command.endpoint.auth === 'admin';
