import * as z from 'zod/mini';
import { PaginationSchema } from '../../schemas/pagination';
import { parseContext } from './parse-context';
import { PathId, pathFiller, placeholdersOf } from './path';

type Schema = z.ZodMiniType;
type SafeParseResult<T = unknown> = z.core.util.SafeParseResult<T>;

/** One row of the spec's endpoint table, as data. */
interface EndpointRow<
  TQuery extends Schema | undefined,
  TBody extends Schema | undefined,
  TData extends Schema,
  TSdkMethod extends string = string,
> {
  /** The SDK method that calls it (`contacts.list`): the CLI, OpenAPI, MCP and trace names derive from it. */
  readonly sdkMethod: TSdkMethod;
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
  /** What the spec says of the row that its schemas cannot: the OpenAPI document reads it (`crm openapi`). */
  readonly spec?: SpecFacts;
}

/** The spec's facts of a row beyond its schemas. */
interface SpecFacts {
  /**
   * Query fields, `tenantId` among them, that the spec's table does not mark required, though the
   * SDK's method requires them (and always sends the tenant).
   */
  readonly optional?: readonly string[];
  /** Fields of the input the SDK turns into others before sending (`activities.create({ opportunityId })`). */
  readonly sdkOnly?: readonly string[];
}

type Part<T extends Schema | undefined> = T extends Schema ? T : z.ZodMiniUndefined;

/** An endpoint row with what the request path derives from it once, at load time. */
export interface Endpoint<
  TQuery extends Schema | undefined = Schema | undefined,
  TBody extends Schema | undefined = Schema | undefined,
  TData extends Schema = Schema,
  TSdkMethod extends string = string,
> extends EndpointRow<TQuery, TBody, TData, TSdkMethod> {
  /** Validates every input of a call at once, so one error names every offending field. */
  readonly input: z.ZodMiniType<
    { path?: Record<string, string>; query?: z.output<Part<TQuery>>; body?: z.output<Part<TBody>> },
    { path?: Record<string, string>; query?: z.input<Part<TQuery>>; body?: z.input<Part<TBody>> }
  >;
  /** `input.safeParse`, in English. */
  readonly parseInput: (value: unknown) => SafeParseResult<z.output<Endpoint<TQuery, TBody, TData>['input']>>;
  /** The whole response body: `success`, `data`, and `pagination` on lists. */
  readonly envelope: Schema;
  /** `METHOD path`: the key of the endpoint's generated envelope validator. */
  readonly key: string;
  /** Fills the path's placeholders. */
  readonly fill: (values: Readonly<Record<string, string>>) => string;
}

/** What a call passes to the request path. */
export type EndpointInput<E extends Endpoint> = z.input<E['input']>;

export function defineEndpoint<
  TQuery extends Schema | undefined = undefined,
  TBody extends Schema | undefined = undefined,
  TData extends Schema = Schema,
  const TSdkMethod extends string = string,
>(row: EndpointRow<TQuery, TBody, TData, TSdkMethod>): Endpoint<TQuery, TBody, TData, TSdkMethod> {
  const ids = placeholdersOf(row.path);
  // An absent part accepts only undefined: z.optional(z.never()) says so with schemas every app
  // bundles anyway (strictObject rests on never), where z.undefined() would add its own.
  const path = ids.length ? z.strictObject(Object.fromEntries(ids.map((id) => [id, PathId]))) : Absent;
  // The whole input's schema and the envelope's are built when first read, not at import: a call
  // needs the first only when a part fails, the second only when a body fails its generated
  // validator (PERFORMANCE.md, "Schemas built when first needed").
  let input: z.ZodMiniType | undefined;
  let envelope: Schema | undefined;
  const inputSchema = () => (input ??= z.strictObject({ path, query: row.query ?? Absent, body: row.body ?? Absent }));
  const parseParts = partsParser(path, row.query, row.body);
  return {
    ...row,
    get input() {
      return inputSchema() as unknown as Endpoint<TQuery, TBody, TData>['input'];
    },
    parseInput: (value) =>
      (parseParts(value) ?? inputSchema().safeParse(value, parseContext)) as ReturnType<
        Endpoint<TQuery, TBody, TData>['parseInput']
      >,
    get envelope() {
      envelope ??= z.looseObject({
        success: z.literal(true),
        data: row.list ? z.array(row.data) : row.data,
        ...(row.list ? { pagination: PaginationSchema } : {}),
      });
      return envelope;
    },
    key: `${row.method} ${row.path}`,
    fill: pathFiller(row.path),
  };
}

/** The schema of a part an endpoint does not take: only undefined; one for every endpoint and part. */
const Absent = z.optional(z.never());

/**
 * A call's input, part by part, each by the schema the whole `input` schema gives it
 * (PERFORMANCE.md, "Input checked part by part"). Undefined when any part fails: the whole schema
 * then names every offending field at once. The resources build the wrapper, always of these three parts.
 */
function partsParser(path: Schema, query: Schema | undefined, body: Schema | undefined) {
  return (value: unknown): SafeParseResult | undefined => {
    const parts = value as Record<'path' | 'query' | 'body', unknown>;
    const p = path.safeParse(parts.path);
    const q = partOf(query, parts.query);
    const b = partOf(body, parts.body);
    if (!p.success || !q?.success || !b?.success) return undefined;
    // A path comes out as it went in, so a call with nothing else to check keeps its own object.
    if (q === ABSENT && b === ABSENT) return { success: true, data: value };
    return { success: true, data: { path: p.data, query: q.data, body: b.data } };
  };
}

const ABSENT = { success: true, data: undefined } as const;

/** A part by its schema; an endpoint without one takes nothing there. */
const partOf = (schema: Schema | undefined, value: unknown) =>
  schema ? schema.safeParse(value) : value === undefined ? ABSENT : undefined;
