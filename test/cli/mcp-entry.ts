/**
 * `crm mcp` for the tests, until the `crm` bin exists: runs the source under Node's type stripping
 * and does what the bin will do (a client from the environment, exit 1 with the message when the
 * MCP SDK is missing). `node test/cli/mcp-entry.ts [--allow-writes]`.
 *
 * With CRM_TEST_HIDE_MCP_SDK=1, `@modelcontextprotocol/sdk` cannot be resolved, as when the
 * optional peer is not installed.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (process.env.CRM_TEST_HIDE_MCP_SDK === '1' && specifier.startsWith('@modelcontextprotocol/sdk')) {
      // What Node says for a package that is not installed.
      const error = new Error(`Cannot find package '@modelcontextprotocol/sdk' imported from ${context.parentURL}`);
      throw Object.assign(error, { code: 'ERR_MODULE_NOT_FOUND' });
    }
    // The source imports its modules without an extension, as a bundler resolves them.
    const ours = specifier.startsWith('.') && !context.parentURL?.includes('/node_modules/');
    if (ours && !/\.[cm]?[jt]s$/.test(specifier)) {
      try {
        return nextResolve(`${specifier}.ts`, context);
      } catch {
        return nextResolve(`${specifier}/index.ts`, context);
      }
    }
    return nextResolve(specifier, context);
  },
});

const { CrmClient } = await import('../../src/client.ts');
const { McpSdkMissingError, runMcpServer } = await import('../../src/cli/mcp.ts');

try {
  await runMcpServer({ crm: new CrmClient(), allowWrites: process.argv.includes('--allow-writes'), version: '0.0.0' });
  process.exit(0);
} catch (error) {
  if (!(error instanceof McpSdkMissingError)) throw error;
  process.stderr.write(`crm: ${error.message}\n`);
  process.exit(1);
}
