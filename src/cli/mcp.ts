import type { Readable, Writable } from 'node:stream';
import type { CrmClient } from '../client';
import { toolsFor } from './mcp-tools';
import { safeJson } from './output';

/** The package `crm mcp` needs: an optional peer dependency, loaded only by `crm mcp`. */
const MCP_SDK = '@modelcontextprotocol/sdk';

/**
 * `crm mcp` was run without the MCP SDK installed. Its message says how to install it; the
 * command prints it and exits 1.
 */
class McpSdkMissingError extends Error {
  constructor(options?: ErrorOptions) {
    super(
      `crm mcp needs the Model Context Protocol SDK (${MCP_SDK} 1.23 or later), an optional peer dependency ` +
        `of crm-integration-sdk: ` +
        `npm install ${MCP_SDK}`,
      options,
    );
    this.name = 'McpSdkMissingError';
  }
}

/**
 * The MCP SDK closed the connection itself, not because the client ended its input: a message
 * over its size limit (10 MiB), for one. The command says so and exits 1, since the client was
 * left without an answer.
 */
class McpConnectionLostError extends Error {
  constructor(reason: unknown) {
    const said = reason instanceof Error ? `: ${reason.message}` : '';
    super(`crm mcp stopped: the MCP SDK closed the connection to the client${said}`);
    this.name = 'McpConnectionLostError';
  }
}

/** Options of {@link runMcpServer}. */
export interface McpServerOptions {
  /** The client every tool calls: its tenant and key are the server's (the command builds it from the environment). */
  readonly crm: CrmClient;
  /** Lists and accepts the tools that write (`contacts_create`, ...): `crm mcp --allow-writes`. */
  readonly allowWrites: boolean;
  /** The version the server reports to clients: the package's. */
  readonly version: string;
  /**
   * Credentials to mask in every answer, besides those the SDK masks in its errors. Default: the
   * values of `CRM_API_KEY` and `CRM_ADMIN_TOKEN`; give the client's own when it was built otherwise.
   */
  readonly secrets?: readonly string[] | undefined;
  /** Where the client's messages come from. Default `process.stdin`. */
  readonly input?: Readable | undefined;
  /** Where the answers go. Default `process.stdout`: nothing else may write there. */
  readonly output?: Writable | undefined;
}

/** Node's codes for a module not found (ESM, CJS), or a version without the modules loaded here. */
const MISSING = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

/** The MCP SDK, or a module it needs, cannot be loaded: installing it is the cure. */
function isMcpSdkMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return MISSING.has(code as string) && typeof message === 'string' && message.includes(MCP_SDK);
}

/** The MCP SDK's low-level server, loaded on demand: only `crm mcp` needs it, and it may be absent. */
async function loadMcpSdk() {
  try {
    const [server, stdio, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return { ...server, ...stdio, ...types };
  } catch (error) {
    if (isMcpSdkMissing(error)) throw new McpSdkMissingError({ cause: error });
    throw error;
  }
}

/**
 * Serves the CRM as a Model Context Protocol server over stdio (`crm mcp`): one tool per SDK
 * method, read tools only unless `allowWrites`, key management never. Resolves when the client
 * has closed the input and the calls under way are answered; the caller then exits (the client's
 * idle connections would keep the process up).
 * Rejects with {@link McpSdkMissingError} when `@modelcontextprotocol/sdk` is not installed.
 *
 * The MCP SDK's low-level `Server` is used, not `McpServer`: `McpServer` takes zod schemas and
 * checks the arguments with them before a tool runs, in its own words, whereas these tools are
 * described by JSON Schema from the SDK's table and checked by the SDK's own methods, so that a
 * bad argument gets the SDK's message, as on the command line.
 */
export async function runMcpServer(options: McpServerOptions): Promise<void> {
  const { Server, StdioServerTransport, ListToolsRequestSchema, CallToolRequestSchema } = await loadMcpSdk();
  const secrets = options.secrets ?? [process.env.CRM_API_KEY ?? '', process.env.CRM_ADMIN_TOKEN ?? ''];
  const tools = toolsFor(options.crm, options.allowWrites, secrets);
  const input = options.input ?? process.stdin;
  const server = new Server(
    { name: 'crm-integration-sdk', version: options.version },
    {
      capabilities: { tools: {} },
      instructions:
        `Tools of a CRM's integration API, for tenant ${options.crm.tenantId ?? '(none configured)'}: the tenant and ` +
        `its key are the server's, from its environment, and no argument changes them. ` +
        (options.allowWrites
          ? 'Write tools are enabled.'
          : 'Read-only: the write tools need `crm mcp --allow-writes`.'),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools.definitions] }));
  const pending = new Set<Promise<unknown>>();
  // A cancelled request (notifications/cancelled) aborts the SDK call it started.
  server.setRequestHandler(CallToolRequestSchema, ({ params }, { signal }) => {
    const answer = tools.call(params.name, params.arguments, signal);
    pending.add(answer);
    void answer.finally(() => pending.delete(answer));
    return answer;
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  // What the transport last reported; a message it could not parse is reported and passed over.
  let reported: unknown;
  server.onerror = (error) => {
    reported = error;
  };
  let ending = false;
  await server.connect(new StdioServerTransport(input, jsonSafeOutput(options.output ?? process.stdout)));
  // The stdio transport does not watch for the end of its input: the client is done when it ends.
  // The calls under way are answered first (`echo '...' | crm mcp` wants its answer); the SDK's
  // timeouts bound them, and an MCP client that will not wait stops the process anyway.
  // (setImmediate: the SDK sends an answer some promise turns after the tool's call settles.)
  const end = () => {
    ending = true;
    void Promise.allSettled(pending)
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => server.close());
  };
  input.once('end', end);
  input.once('close', end);
  await closed;
  if (!ending) throw new McpConnectionLostError(reported);
}

/**
 * `output` with each message the transport writes (a JSON-RPC message, one line) passed through
 * `safeJson`, as every JSON `crm` prints: a client that splits lines on U+2028 would cut a
 * message in two. The transport uses `write()` and the stream's events; the rest is `output`'s.
 */
function jsonSafeOutput(output: Writable): Writable {
  return new Proxy(output, {
    get(target, name) {
      if (name === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...args: unknown[]) => boolean).call(
            target,
            typeof chunk === 'string' ? safeJson(chunk) : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
