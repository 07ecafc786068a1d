import { createHash } from 'node:crypto';

/**
 * A base URL's fingerprint, kept with what a pacer learns of a key's rate: another server (a
 * sandbox, a region) limits the same key otherwise, so a rate learned there is not used. Not a
 * secret (a base URL is none), only short: 16 hex digits of its SHA-256, the trailing slashes
 * left out as the transport leaves them out. An empty base (a pacer made without one, in tests) has none.
 */
export const baseFingerprint = (base: string): string | undefined =>
  base === '' ? undefined : createHash('sha256').update(base.replace(/\/+$/, '')).digest('hex').slice(0, 16);
