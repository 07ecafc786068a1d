// msw 3 renamed msw 2's `onUnhandledRequest` to `onUnhandledFrame`: an unmatched request fails the test.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { server } from './msw-server';

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());
