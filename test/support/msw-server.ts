import { setupServer } from 'msw/node';
import { afterAll, beforeAll } from 'vitest';

/** The MSW server of the suite: no handlers of its own; each test adds its own with `server.use`. */
export const server = setupServer();

/**
 * For the calling file: MSW closed, so that requests go out through Node's own fetch (undici), as
 * in a service, where undici's diagnostics channels and its OpenTelemetry instrumentation see
 * them (what MSW's interceptor passes through does not reach them). Reopened after the file, as
 * setup.ts left it, for its own afterAll.
 */
export function useNodeFetch(): void {
  beforeAll(() => server.close());
  afterAll(() => server.listen({ onUnhandledFrame: 'error' }));
}
