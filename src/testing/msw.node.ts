import { createRequire } from 'node:module';
import type { Msw } from './msw';

/**
 * msw, loaded when createFakeCrm() is first called rather than when the entry is imported, so
 * that startFakeCrmServer(), the crm-fake bin and the rest of the kit work without it. The builds
 * for Node, Bun and Deno (ESM and CJS) use this file in place of msw.ts (tsup.config.ts).
 */
export function loadMsw(): Msw {
  try {
    // msw is ESM-only: this is require(esm), which shares the module instance with `import 'msw'`.
    return createRequire(import.meta.url)('msw') as Msw;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(
      'createFakeCrm() needs msw, an optional peer dependency of crm-integration-sdk/testing: ' +
        'npm install --save-dev msw. (startFakeCrmServer() and FakeCrmCore work without it.)',
      { cause: error },
    );
  }
}
