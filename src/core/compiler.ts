// Loaded on demand by endpoint.ts: zod's code generator is a third of the zod code the SDK uses,
// and a client needs it only once responses start arriving.
export { compile } from 'zod/v4/core';
