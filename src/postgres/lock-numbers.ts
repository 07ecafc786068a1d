import { createHash } from 'node:crypto';

/*
 * Advisory lock numbers in one place: the opening, a run's lock and the claims each lock by a
 * number derived from names, and every worker of a fleet must derive the same number from the same
 * names (test/postgres/claims-reserve.test.ts derives a claim's as they do).
 */

/** A 64-bit advisory lock number for `parts`, as Postgres reads a bigint parameter. */
export function lockNumber(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest().readBigInt64BE(0).toString();
}
