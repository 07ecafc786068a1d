/** A call to an endpoint the SDK does not describe: what `crm.request()` takes. */
export interface CrmRequest {
  /** The HTTP method. POST and PATCH are retried only when the server proves it did not act (429, or 503 with `Retry-After`). */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * The path, relative to `baseUrl`, such as `integrations/v1/widgets` (a leading `/` is allowed).
   * Sent as written: percent-encode ids yourself. A URL, a path with `..` or `.` segments, a
   * query string or a fragment is refused.
   */
  path: string;
  /** Query parameters, as `extraQuery` takes them. `tenantId` is refused: the client supplies the tenant. */
  query?: Record<string, unknown> | undefined;
  /** The JSON body. With `tenantIn: 'body'` it must be an object (or absent); `tenantId` in it is refused. */
  body?: unknown;
  /**
   * Where the client puts `tenantId`: the query string (the default), the JSON body, or nowhere.
   * The `x-tenant-id` header is sent whichever it is.
   */
  tenantIn?: 'query' | 'body' | 'none' | undefined;
}
