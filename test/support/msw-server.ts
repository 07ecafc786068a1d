import { setupServer } from 'msw/node';

/** The MSW server of the suite: no handlers of its own; each test adds its own with `server.use`. */
export const server = setupServer();
