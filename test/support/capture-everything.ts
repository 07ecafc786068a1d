import { HttpResponse, http } from 'msw';
import { BASE_URL, type Captured } from './capture';
import { server } from './msw-server';

/** A request as the server got it, with its body as text and parsed. */
export interface Seen extends Captured {
  readonly text: string;
}

/**
 * Answers every request to the base URL with an envelope the SDK accepts (a one-record page for a
 * collection GET, a record otherwise) and records each, body included.
 */
export function captureEverything(): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, async ({ request }) => {
      const text = await request.clone().text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const url = new URL(request.url);
      seen.push({ method: request.method, url, headers: request.headers, body, text });
      const collection = request.method === 'GET' && url.pathname.split('/').length === 4;
      return collection
        ? HttpResponse.json({ success: true, data: [RECORD], pagination: { page: 1, pages: 1, limit: 20, total: 1 } })
        : HttpResponse.json({ success: true, data: RECORD });
    }),
  );
  return seen;
}

const RECORD = { id: 'rec_1', email: 'a@x.io', name: 'N', accountId: 'acc_1' };

/** The tenant ids a request carried, in its query and in its JSON body. */
export function tenantsOf(seen: readonly Seen[]): string[] {
  const out: string[] = [];
  for (const request of seen) {
    out.push(...request.url.searchParams.getAll('tenantId'));
    const { body } = request;
    if (typeof body === 'object' && body !== null && 'tenantId' in body) out.push(String(body.tenantId));
  }
  return out;
}
