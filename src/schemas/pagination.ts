import * as z from 'zod/mini';
import { NullishNumber } from './common';
import { int } from './length';
import { inEnglish } from './messages';
import type { RecordSchemaOf } from './named';

/**
 * The `pagination` object of a list response. The spec types its four fields as integers and
 * describes them no further. Each may be missing or `null` (and any number is accepted), so that
 * a server which omits one still pages: the iterator then falls back to the page size.
 */
export type Pagination = {
  /**
   * The number of this page: an integer, per the spec (the SDK accepts any number).
   * @integer
   */
  page?: number | null | undefined;
  /**
   * How many records a page holds: an integer, per the spec (the SDK accepts any number).
   * @integer
   */
  limit?: number | null | undefined;
  /**
   * How many records there are in all: an integer, per the spec (the SDK accepts any number).
   * @integer
   */
  total?: number | null | undefined;
  /**
   * How many pages there are: an integer, per the spec (the SDK accepts any number).
   * @integer
   */
  pages?: number | null | undefined;
};

/**
 * The `pagination` object of list responses. Every field is tolerated as missing so that a
 * server which omits one still pages (the iterator then falls back to the page size).
 */
export const PaginationSchema = (z.looseObject as RecordSchemaOf<Pagination>)({
  page: NullishNumber,
  limit: NullishNumber,
  total: NullishNumber,
  pages: NullishNumber,
});

/** `page` (>= 1) and `limit` (1 to 200), shared by both list endpoints. */
export const PageParams = {
  page: z.optional(int(z.gte(1))),
  limit: z.optional(int(z.gte(1), z.lte(200))),
};

// What a call says of a bad value, the exported schemas say too (messages.ts).
inEnglish(PaginationSchema);
