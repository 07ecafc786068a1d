/**
 * The columns (CSV) or properties (NDJSON) a `--failed` file adds to each row: why it failed, and
 * the field (its source column). A source reader ignores them, so that the file, fixed, loads again.
 */
export const FAILED_COLUMNS: readonly string[] = ['error', 'field'];
