const MASK = '[redacted]';

/**
 * Returns a function that replaces every occurrence of the given secrets inside strings, arrays
 * and plain objects. Errors pass server text through it, since a server may echo a credential.
 */
export function redactor(secrets: readonly (string | undefined)[]): <T>(value: T) => T {
  const present = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  if (present.length === 0) return (value) => value;
  const redactString = (text: string) => present.reduce((out, secret) => out.split(secret).join(MASK), text);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redactString(value);
    if (depth > 32 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactString(k), walk(v, depth + 1)]));
  };
  return <T>(value: T) => walk(value, 0) as T;
}

/** A copy of `headers` with every credential header masked, for logs and snapshots. */
export function redactHeaders(headers: Headers, redact: <T>(value: T) => T): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    out.set(name, /^(authorization|x-api-key|cookie|set-cookie)$/i.test(name) ? MASK : redact(value));
  }
  return out;
}
