const MASK = '[redacted]';

/** Masks credentials in a value: strings, and the strings inside arrays and plain objects. */
export type Redact = <T>(value: T) => T;

/**
 * Returns a function that replaces every occurrence of the given secrets inside strings, arrays
 * and plain objects. Errors pass server text through it, since a server may echo a credential.
 */
export function redactor(secrets: readonly (string | undefined)[]): Redact {
  // Longest first, so that a secret that contains another is masked whole; and whatever its
  // length, since a key the SDK sends must never be shown.
  const present = secrets
    .filter((s): s is string => typeof s === 'string' && s.length > 0)
    .sort((a, b) => b.length - a.length);
  if (present.length === 0) return (value) => value;
  const redactString = (text: string) => present.reduce((out, secret) => out.split(secret).join(MASK), text);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redactString(value);
    if (typeof value !== 'object' || value === null) return value;
    // Past this depth nothing is inspected, so nothing is kept.
    if (depth > 32) return '[truncated]';
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactString(k), walk(v, depth + 1)]));
  };
  return <T>(value: T) => walk(value, 0) as T;
}

/**
 * An error safe to keep as a `cause`: the same error when no secret is in its message, stack or
 * causes, else a plain copy with the secrets masked (a custom fetch may put anything in there).
 */
export function redactError(error: unknown, redact: Redact, depth = 0): unknown {
  if (!(error instanceof Error) || depth > 4) return error;
  const cause = redactError(error.cause, redact, depth + 1);
  if (redact(error.message) === error.message && redact(error.stack) === error.stack && cause === error.cause) {
    return error;
  }
  const copy = new Error(redact(error.message), cause === undefined ? undefined : { cause });
  copy.name = error.name;
  if (error.stack !== undefined) copy.stack = redact(error.stack);
  return copy;
}

/** A copy of `headers` with every credential header masked, for logs and snapshots. */
export function redactHeaders(headers: Headers, redact: Redact): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    // A header whose name carries a secret is left out: a mask is not a legal header name.
    if (redact(name) !== name) continue;
    out.set(
      name,
      /^(authorization|proxy-authorization|x-api-key|cookie|set-cookie)$/i.test(name) ? MASK : redact(value),
    );
  }
  return out;
}
