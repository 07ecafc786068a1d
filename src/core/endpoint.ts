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
  /** `input.safeParse`, with a parser compiled on first use (see `compiledParser()`). */
  readonly parseInput: (value: unknown) => SafeParseResult<z.output<Endpoint<TQuery, TBody, TData>['input']>>;
  /** Validates a whole response body (with a parser compiled on first use, see `compiledParser()`). */
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
  const input = z.strictObject({
    path: ids.length ? z.strictObject(Object.fromEntries(ids.map((id) => [id, PathId]))) : z.optional(z.undefined()),
    query: row.query ?? z.optional(z.undefined()),
    body: row.body ?? z.optional(z.undefined()),
  });
  const envelope = z.looseObject({
    success: z.literal(true),
    data: row.list ? z.array(row.data) : row.data,
    ...(row.list ? { pagination: PaginationSchema } : {}),
  });
  return {
    ...row,
    input: input as unknown as Endpoint<TQuery, TBody, TData>['input'],
    parseInput: compiledParser(input) as Endpoint<TQuery, TBody, TData>['parseInput'],
    parseEnvelope: compiledParser(envelope),
    fill: pathFiller(row.path),
  };
}

let compile: ((schema: Schema) => Schema) | undefined;
let compilerLoading = false;

/** Starts loading zod's compiler, if it is not loaded or loading. Parsers use it once it is there. */
export function loadCompiler(): void {
  if (compilerLoading) return;
  compilerLoading = true;
  import('./compiler').then(
    (module) => {
      compile = module.compile;
    },
    () => {
      // Parsing goes on with the plain parsers; the next call tries to load it again.
      compilerLoading = false;
    },
  );
}

/**
 * `safeParse` with zod's generated parser (about 3x faster on a page of 200 records, 2x on a
 * call's input), made on
 * first use after the compiler has loaded; until then, and where code generation is forbidden
 * (CSP, some edge runtimes), the plain parser does the same work more slowly.
 */
function compiledParser(schema: Schema): (value: unknown) => SafeParseResult {
  let parser: Schema | undefined;
  return (value) => {
    if (!parser) {
      if (!compile) {
        loadCompiler();
        return schema.safeParse(value, parseContext);
      }
      try {
        parser = compile(schema);
      } catch {
        parser = schema;
      }
    }
    return parser.safeParse(value, parseContext);
  };
}
