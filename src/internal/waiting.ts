// What a call may wait for before an attempt: its key, from an `apiKey` function, a
// `maxConcurrency` slot, and its turn at its credential's pace (`throttle: 'auto'`). One chunk,
// loaded on demand: most calls wait for none (PERFORMANCE.md, "Chunks loaded on demand").
export { lookUpKey } from './key-lookup';
export { Limiter } from './limiter';
export { Pacers } from './pacer';
