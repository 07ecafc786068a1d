/**
 * `Retry-After` in milliseconds from now: seconds (a fraction allowed) or an HTTP date
 * (`Sun, 06 Nov 1994 08:49:37 GMT`); undefined for anything else, which `Date.parse` alone would
 * read as some date (`-1`, `2 3`).
 */
export function retryAfterMsOf(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
