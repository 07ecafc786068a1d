// What a call may wait for before its first attempt: its key, from an `apiKey` function, and a
// `maxConcurrency` slot. One chunk, loaded on demand: most calls wait for neither
// (PERFORMANCE.md, "Chunks loaded on demand").
export { lookUpKey } from './key-lookup';
export { Limiter } from './limiter';
