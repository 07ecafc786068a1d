import * as z from 'zod/mini';
import { PaginationSchema } from '../schemas/pagination';
import { parseContext } from './parse-context';
import { PathId, pathFiller, placeholdersOf } from './path';

type Schema = z.ZodMiniType;
type SafeParseResult<T = unknown> = z.core.util.SafeParseResult<T>;

/** One row of the spec's endpoint table, as data. */
interface EndpointRow<TQuery extends Schema | undefined, TBody extends Schema | undefined, TData extends Schema> {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Relative to the base URL; `{id}` placeholders are filled with percent-encoded values. */
  readonly path: string;
  /** Where `tenantId` goes: the query string, the JSON body, or nowhere (key management). */
  readonly tenantIn: 'query' | 'body' | 'none';
  /** `apiKey`: `x-api-key` + `x-tenant-id`; `admin`: `Authorization: Bearer <adminToken>`. */
  readonly auth: 'apiKey' | 'admin';
  readonly query?: TQuery;
  readonly body?: TBody;
  /** Schema of the envelope's `data`; of one item for lists. */
  readonly data: TData;
  /** The response is a page: `data` is an array and `pagination` comes beside it. */
  readonly list?: boolean;
}

type Part<T extends Schema | undefined> = T extends Schema ? T : z.ZodMiniUndefined;

/** An endpoint row with what the request path derives from it once, at load time. */
export interface Endpoint<
  TQuery extends Schema | undefined = Schema | undefined,
  TBody extends Schema | undefined = Schema | undefined,
  TData extends Schema = Schema,
> extends EndpointRow<TQuery, TBody, TData> {
  /** Validates every input of a call at once, so one error names every offending field. */
  readonly input: z.ZodMiniType<
    { path?: Record<string, string>; query?: z.output<Part<TQuery>>; body?: z.output<Part<TBody>> },
    { path?: Record<string, string>; query?: z.input<Part<TQuery>>; body?: z.input<Part<TBody>> }
  >;
  /** `input.safeParse`, in English. */
  readonly parseInput: (value: unknown) => SafeParseResult<z.output<Endpoint<TQuery, TBody, TData>['input']>>;
  /** The whole response body: `success`, `data`, and `pagination` on lists. */
  readonly envelope: Schema;
  /** Validates a whole response body (see `envelopeParser()`). */
  readonly parseEnvelope: (value: unknown) => SafeParseResult;
  /** Fills the path's placeholders. */
  readonly fill: (values: Readonly<Record<string, string>>) => string;
}

/** What a call passes to the request path. */
export type EndpointInput<E extends Endpoint> = z.input<E['input']>;

export function defineEndpoint<
  TQuery extends Schema | undefined = undefined,
  TBody extends Schema | undefined = undefined,
  TData extends Schema = Schema,
>(row: EndpointRow<TQuery, TBody, TData>): Endpoint<TQuery, TBody, TData> {
  const ids = placeholdersOf(row.path);
  // An absent part accepts only undefined: z.optional(z.never()) says so with schemas every app
  // bundles anyway (strictObject rests on never), where z.undefined() would add its own.
  const input = z.strictObject({
    path: ids.length ? z.strictObject(Object.fromEntries(ids.map((id) => [id, PathId]))) : z.optional(z.never()),
    query: row.query ?? z.optional(z.never()),
    body: row.body ?? z.optional(z.never()),
  });
  const envelope = z.looseObject({
    success: z.literal(true),
    data: row.list ? z.array(row.data) : row.data,
    ...(row.list ? { pagination: PaginationSchema } : {}),
  });
  const parseParts = partsParser(ids, row.query, row.body);
  return {
    ...row,
    input: input as unknown as Endpoint<TQuery, TBody, TData>['input'],
    parseInput: (value) =>
      (parseParts(value) ?? input.safeParse(value, parseContext)) as ReturnType<
        Endpoint<TQuery, TBody, TData>['parseInput']
      >,
    envelope,
    parseEnvelope: envelopeParser(`${row.method} ${row.path}`, envelope),
    fill: pathFiller(row.path),
  };
}

/**
 * A call's input, part by part: each path id, the query and the body by their own schemas, the
 * same checks as the whole `input` schema. Undefined when any part fails: the whole schema then
 * names every offending field at once. Every call passes here, and zod's interpreter, going
 * through the wrapper and its strict checks, allocated about 1 KB per call to check one id.
 */
function partsParser(
  ids: readonly string[],
  query: Schema | undefined,
  body: Schema | undefined,
): (value: unknown) => SafeParseResult | undefined {
  return (value) => {
    // Resources build the wrapper: it is always an object of these three parts.
    const parts = value as { path?: Record<string, unknown>; query?: unknown; body?: unknown };
    const { path } = parts;
    if (ids.length === 0 ? path !== undefined : !hasOnlyKeys(path, ids)) return undefined;
    for (const id of ids) if (!PathId.safeParse(path?.[id]).success) return undefined;
    if (!query && parts.query !== undefined) return undefined;
    if (!body && parts.body !== undefined) return undefined;
    // Ids come out as they went in, so a call with nothing else to check keeps its own object.
    if (!query && !body) return { success: true, data: value };
    const q = query?.safeParse(parts.query);
    const b = body?.safeParse(parts.body);
    if (q?.success === false || b?.success === false) return undefined;
    return { success: true, data: { path, query: q?.data, body: b?.data } };
  };
}

/** Whether `value` is an object with exactly the keys `keys`, as the path's strict schema wants. */
function hasOnlyKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!keys.includes(key)) return false;
    count += 1;
  }
  return count === keys.length;
}

type Parsers = typeof import('./envelope-parsers.generated');
let parsers: Parsers | undefined;
let parsersLoading = false;

/** Starts loading the response parsers, if they are not loaded or loading. */
export function loadParsers(): void {
  if (parsersLoading) return;
  parsersLoading = true;
  import('./envelope-parsers.generated').then(
    (module) => {
      parsers = module;
    },
    () => {
      // Parsing goes on with zod's interpreter; the next response tries to load them again.
      parsersLoading = false;
    },
  );
}

/**
 * `safeParse` of an endpoint's envelope with the parser zod's compiler wrote for it at build time
 * (scripts/envelope-parsers.ts): about 15x faster than zod's interpreter on a page of 200
 * records, and no code generated at run time. The interpreter answers what that parser does not
 * accept, so that the issues are zod's own, and everything until the parsers have loaded.
 */
function envelopeParser(key: string, schema: Schema): (value: unknown) => SafeParseResult {
  return (value) => {
    const parse = parsers?.envelopeParsers[key];
    if (parse) {
      const data = parse(value);
      if (data !== parsers?.INVALID) return { success: true, data };
    } else {
      loadParsers();
    }
    return schema.safeParse(value, parseContext);
  };
}
