import * as z from 'zod/mini';
import { opt } from './common';

/**
 * The `pagination` object of list responses. Every field is tolerated as missing so that a
 * server which omits one still pages (the iterator then falls back to the page size).
 */
export const PaginationSchema = z.looseObject({
  page: opt(z.number()),
  limit: opt(z.number()),
  total: opt(z.number()),
  pages: opt(z.number()),
});

/** The `pagination` object of a list response: `page`, `limit`, `total`, `pages`. */
export type Pagination = z.infer<typeof PaginationSchema>;

/** `page` (>= 1) and `limit` (1 to 200), shared by both list endpoints. */
export const PageParams = {
  page: z.optional(z.int().check(z.gte(1))),
  limit: z.optional(z.int().check(z.gte(1), z.lte(200))),
};
