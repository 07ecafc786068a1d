import type { CrmClient } from '../client';
import { isCrmError } from '../core/errors';
import type { Page } from '../core/page';
import { PathId } from '../internal/endpoint/path';
import { redactor } from '../internal/report/redaction';
import {
  type Command,
  commands,
  type EndpointName,
  type Field,
  isKeyManagement,
  jsonSchemaOf,
  snakeName,
} from './commands';
import { invoke } from './invoke';
import { pageJson } from './output';

/*
 * The MCP tools of `crm mcp`, as plain data and one function, without the MCP SDK: mcp.ts hands
 * them to the SDK's server. Each tool is an SDK method (one row of `commands`), called through
 * invoke(), so a tool checks, sends, retries and fails exactly as the SDK does.
 */

/** A tool as `tools/list` describes it (the MCP `Tool` shape). */
interface ToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, unknown>>;
    readonly required: readonly string[];
    readonly additionalProperties: false;
  };
  readonly annotations: {
    readonly title: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
}

/** What `tools/call` answers (the MCP `CallToolResult` shape): JSON text, and the same as structured content. */
interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const PAGING =
  ' Returns one page: {"data": [...], "pagination": {...}, "next": {...} | null}. To read the next page, ' +
  'call this tool again with the arguments in "next"; "next" is null on the last page.';

function positionalSchema(command: Command): unknown {
  const positional = command.positional;
  if (!positional) return undefined;
  const { description } = positional;
  if (positional.in === 'path') return { description, ...jsonSchemaOf(PathId, 'input') };
  // A query positional (`grantId`) was the query's only field: its schema is that field's.
  const query = command.endpoint.query ? jsonSchemaOf(command.endpoint.query, 'input') : {};
  const schema = (query as { properties?: Record<string, object> }).properties?.[positional.name];
  return { description, ...schema };
}

/**
 * Inputs whose requirement JSON Schema's `required` cannot say: `activities.create()` needs
 * `opportunityId`, or `relatedToType` and `relatedToId` instead, which would take a top-level
 * `anyOf` that MCP clients and model APIs refuse in a tool's input. The tool takes the integration
 * flow's way, as the spec describes it ("for integrations it is the opportunity id"), and requires
 * it, so that an input valid against the schema is never refused for a missing field.
 */
const toolInputs: Partial<Record<EndpointName, { readonly require: string; readonly omit: readonly string[] }>> = {
  createActivity: { require: 'opportunityId', omit: ['relatedToType', 'relatedToId'] },
};

/** A command's fields as its tool takes them. */
function toolFields(command: Command): readonly Field[] {
  const adjust = toolInputs[command.name];
  if (!adjust) return command.fields;
  return command.fields
    .filter((field) => !adjust.omit.includes(field.name))
    .map((field) => (field.name === adjust.require ? { ...field, required: true } : field));
}

function definitionOf(command: Command): ToolDefinition {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (command.positional) {
    properties[command.positional.name] = positionalSchema(command);
    required.push(command.positional.name);
  }
  for (const field of toolFields(command)) {
    properties[field.name] = field.schema;
    if (field.required) required.push(field.name);
  }
  const { method, path } = command.endpoint;
  const title = command.endpoint.sdkMethod;
  // PUT replaces the fields it is given: destructive, and the same call twice changes nothing more.
  const update = method === 'PUT';
  return {
    name: snakeName(command),
    title,
    description: `${command.summary} (${method} /${path})${command.list ? PAGING : ''}`,
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    annotations: {
      title,
      readOnlyHint: !command.writes,
      destructiveHint: update,
      idempotentHint: !command.writes || update,
      // One tenant's records in one CRM: a closed domain, as a memory tool's is (not the web).
      openWorldHint: false,
    },
  };
}

/** A failure the tool reports itself, before the SDK is called: its message is the whole answer. */
class ToolInputError extends Error {}

const text = (value: unknown): ToolResult => {
  // JSON.stringify(undefined) is undefined: an answer without data is said as null.
  const result: ToolResult = { content: [{ type: 'text', text: JSON.stringify(value) ?? 'null' }] };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    result.structuredContent = value as Record<string, unknown>;
  }
  return result;
};

const failure = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

/**
 * Splits a tool's arguments into the SDK method's positional value and input object. Refuses any
 * name the tool does not declare (`tenantId` among them: the tenant is the server's, from its
 * environment), so that nothing unchecked reaches the SDK, whatever the method does with extras.
 */
function split(command: Command, args: Readonly<Record<string, unknown>>) {
  const names = new Set(toolFields(command).map((field) => field.name));
  const positional = command.positional?.name;
  const unknown = Object.keys(args).filter((name) => name !== positional && !names.has(name));
  if (unknown.length > 0) {
    const known = [...(positional ? [positional] : []), ...names];
    throw new ToolInputError(
      `Unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.map((n) => JSON.stringify(n)).join(', ')}. ` +
        `${snakeName(command)} takes ${known.length ? known.join(', ') : 'no arguments'}.`,
    );
  }
  // Own properties only, copied with defineProperty semantics (fromEntries): a `__proto__` key
  // stays data and never becomes a prototype.
  const input = Object.fromEntries(Object.entries(args).filter(([name]) => names.has(name)));
  const value = positional !== undefined && Object.hasOwn(args, positional) ? args[positional] : undefined;
  return { positional: value, input };
}

/**
 * A list's answer: the page, and the arguments of the call for the next one (null on the last
 * page): the same arguments (split() accepted each, and each is an own property), page + 1.
 */
function pageResult(page: Page<{ id: string }>, args: Readonly<Record<string, unknown>>) {
  const given = Object.hasOwn(args, 'page') ? args.page : undefined;
  // The SDK numbers the first page 1 when none is given (src/internal/scope.ts, list()).
  const number = typeof given === 'number' ? given : 1;
  const more = page.hasNextPage() && Number.isSafeInteger(number + 1);
  const next = more ? { ...Object.fromEntries(Object.entries(args)), page: number + 1 } : null;
  return { ...pageJson(page), next };
}

/** The tools of `crm mcp`: their definitions, and how to call one by name. */
export interface Tools {
  /** Every tool `tools/list` shows. */
  readonly definitions: readonly ToolDefinition[];
  /**
   * Calls a tool by name. Never rejects: every failure is a result with `isError`, whose text is
   * the SDK's message (credentials masked by the SDK) or one of ours; never a stack.
   */
  call(name: string, args: Readonly<Record<string, unknown>> | undefined, signal?: AbortSignal): Promise<ToolResult>;
}

/**
 * The tools for `crm`'s client: one per SDK method but key management, which is never exposed.
 * Write tools are listed and callable only with `allowWrites`. `secrets` (the client's key and
 * token) are masked in every answer, as the SDK masks them in its errors: a server that echoes
 * the key in a record must not hand it to the model.
 */
export function toolsFor(crm: CrmClient, allowWrites: boolean, secrets: readonly string[]): Tools {
  const redact = redactor(secrets);
  const exposed = new Map<string, Command>();
  for (const command of commands) if (!isKeyManagement(command)) exposed.set(snakeName(command), command);
  const definitions = [...exposed.values()].filter((c) => allowWrites || !c.writes).map(definitionOf);

  async function call(name: string, args: Readonly<Record<string, unknown>> = {}, signal?: AbortSignal) {
    const command = exposed.get(name);
    if (!command) return failure(`Unknown tool: ${JSON.stringify(name)}. tools/list shows the tools of this server.`);
    if (command.writes && !allowWrites) {
      return failure(
        `${name} writes to the CRM, and this server is read-only: start it with \`crm mcp --allow-writes\`.`,
      );
    }
    try {
      const invocation = split(command, args);
      const result = await invoke(crm, command, invocation, signal ? { signal } : undefined);
      return text(redact(command.list ? pageResult(result as Page<{ id: string }>, args) : result));
    } catch (error) {
      if (error instanceof ToolInputError) return failure(error.message);
      // The SDK's messages mask every credential; anything else could carry anything, so only its kind is told.
      if (isCrmError(error)) return failure(redact(`${error.name}: ${error.message}`));
      return failure(`Unexpected ${error instanceof Error ? error.name : typeof error} while calling ${name}`);
    }
  }
  return { definitions, call };
}
