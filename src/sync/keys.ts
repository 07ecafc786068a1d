/**
 * The longest key a sync takes, in bytes of UTF-8: a record's `key` and its parents' keys
 * (`accountKey`, `contactKey`, `opportunityKey`). Every journal must index a key with its tenant
 * and type beside it, and a Postgres btree row holds at most about 2,700 bytes: 1,024 leaves the
 * tenant room, and is far longer than any ERP's id. A longer key is a bad record (`invalid` in a
 * plan, `failed` in a run), the same on every journal.
 */
export const MAX_SYNC_KEY_BYTES = 1024;

/** UTF-8 bytes of a well-formed string: 1 to 3 a UTF-16 unit, 4 a surrogate pair. */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Why `key` cannot name a record in a journal, or undefined when it can: a non-empty string of
 * well-formed UTF-16 and at most {@link MAX_SYNC_KEY_BYTES} bytes of UTF-8. A lone surrogate (text
 * cut through an emoji by a UTF-16 index) has no UTF-8 form: SQLite would store two such keys as
 * one (U+FFFD), never found again, and Postgres refuses it. U+0000 is taken: every journal stores
 * it (the Postgres journal keeps keys as bytes), and the engine's own separators come after the
 * type, which has none.
 */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string' || key === '') return 'a non-empty string';
  if (!key.isWellFormed()) {
    return 'well-formed text (this one holds a lone surrogate, as text cut through an emoji does, which no journal can store as it is)';
  }
  // A UTF-16 unit is 3 bytes of UTF-8 at most: only a long key needs counting.
  if (key.length * 3 > MAX_SYNC_KEY_BYTES) {
    const bytes = utf8Bytes(key);
    if (bytes > MAX_SYNC_KEY_BYTES) return `at most ${MAX_SYNC_KEY_BYTES} bytes of UTF-8 (this one has ${bytes})`;
  }
  return undefined;
}
