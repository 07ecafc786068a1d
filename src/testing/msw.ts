import { HttpResponse, http } from 'msw';

/** The two pieces of msw that createFakeCrm() uses. */
export interface Msw {
  readonly http: typeof http;
  readonly HttpResponse: typeof HttpResponse;
}

// The build for bundlers: a bundler resolves msw when it bundles, and a lazy load would need an
// async createFakeCrm(). Node, Bun and Deno get msw.node.ts instead (tsup.config.ts).
export const loadMsw = (): Msw => ({ http, HttpResponse });
