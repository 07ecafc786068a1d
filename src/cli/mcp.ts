import type { Readable, Writable } from 'node:stream';
import type { CrmClient } from '../client';
import { toolsFor } from './mcp-tools';

/** The package `crm mcp` needs: an optional peer dependency, loaded only by `crm mcp`. */
const MCP_SDK = '@modelcontextprotocol/sdk';

/**
 * `crm mcp` was run without the MCP SDK installed. Its message says how to install it; the
 * command prints it and exits 1.
 */
export class McpSdkMissingError extends Error {
  constructor(options?: ErrorOptions) {
    super(
      `crm mcp needs the Model Context Protocol SDK, an optional peer dependency of crm-integration-sdk: ` +
        `npm install ${MCP_SDK}`,
      options,
    );
    this.name = 'McpSdkMissingError';
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
  /** Where the client's messages come from. Default `process.stdin`. */
  readonly input?: Readable | undefined;
  /** Where the answers go. Default `process.stdout`: nothing else may write there. */
  readonly output?: Writable | undefined;
}

/** Node's "not found" for a module, as `import()` (ESM) or `require()` (CJS) reports it, naming the MCP SDK. */
function isMcpSdkMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(MCP_SDK)
  );
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
 * closes the input; the caller then exits (the client's idle connections would keep the process up).
 * Rejects with {@link McpSdkMissingError} when `@modelcontextprotocol/sdk` is not installed.
 *
 * The MCP SDK's low-level `Server` is used, not `McpServer`: `McpServer` takes zod schemas and
 * checks the arguments with them before a tool runs, in its own words, whereas these tools are
 * described by JSON Schema from the SDK's table and checked by the SDK's own methods, so that a
 * bad argument gets the SDK's message, as on the command line.
 */
export async function runMcpServer(options: McpServerOptions): Promise<void> {
  const { Server, StdioServerTransport, ListToolsRequestSchema, CallToolRequestSchema } = await loadMcpSdk();
  const tools = toolsFor(options.crm, options.allowWrites);
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
  // A cancelled request (notifications/cancelled) aborts the SDK call it started.
  server.setRequestHandler(CallToolRequestSchema, ({ params }, { signal }) =>
    tools.call(params.name, params.arguments, signal),
  );
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport(input, options.output ?? process.stdout));
  // The stdio transport does not watch for the end of its input: the client has gone when it ends.
  const end = () => void server.close();
  input.once('end', end);
  input.once('close', end);
  await closed;
}
