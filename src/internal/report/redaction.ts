/*
 * Masking of credentials in what the SDK shows: error messages, causes, log lines, and (in the
 * `crm mcp` tools) every answer.
 */

/** What a masked value reads. */
export const MASK = '[redacted]';

/** Masks credentials in a value: strings, and the strings inside arrays and plain objects. */
export type Redact = <T>(value: T) => T;

/**
 * Returns a function that replaces every occurrence of the given secrets inside strings, arrays
 * and plain objects. Errors pass server text through it, since a server may echo a credential,
 * and servers echo them encoded: each secret is also masked URL-encoded (`%20` or `+` for a
 * space), JSON-escaped and in base64 (of its UTF-8 bytes, with or without padding, plain or
 * URL-safe), and in any letter case.
 */
export function redactor(secrets: readonly string[]): Redact {
  const present = secrets.filter((secret) => secret.length > 0);
  if (present.length === 0) return (value) => value;
  const mask = maskOf(present);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return mask(value);
    if (typeof value !== 'object' || value === null) return value;
    // Past this depth nothing is inspected, so nothing is kept.
    if (depth > 32) return '[truncated]';
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [mask(k), walk(v, depth + 1)]));
  };
  return <T>(value: T) => walk(value, 0) as T;
}

/** Masks every form of every secret, longest first, so that a secret that contains another is masked whole. */
function maskOf(secrets: readonly string[]): (text: string) => string {
  const forms = [...new Set(secrets.flatMap(formsOf))].sort((a, b) => b.length - a.length);
  let replace: (text: string) => string;
  try {
    const pattern = new RegExp(forms.map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
    // Compiled here, at its first use: an engine refuses a pattern that is too large only then.
    pattern.test('');
    replace = (text) => text.replace(pattern, MASK);
  } catch {
    // A pattern too large for the engine (keys of many kilobytes): each form, as it is.
    replace = (text) => forms.reduce((out, form) => out.split(form).join(MASK), text);
  }
  return (text) => {
    const direct = replace(text);
    // A server may also escape a key in JSON (\u006b) or percent-encode any of its characters,
    // in any mix: the text is read decoded too, and shown decoded where that shows a secret.
    if (!ENCODED.test(direct)) return direct;
    for (const decoded of decodedForms(direct)) {
      const masked = replace(decoded);
      if (masked !== decoded) return masked;
    }
    return direct;
  };
}

const ENCODED = /\\u[0-9a-f]{4}|%[0-9a-f]{2}/i;

/** `text` with JSON's \u escapes and percent-encoding decoded; and with `+` as a space, as forms encode it. */
function decodedForms(text: string): string[] {
  const decoded = text
    .replace(/\\u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/(%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  return [decoded, decoded.replace(/\+/g, ' ')];
}

/** The forms in which a server may echo `secret`. */
function formsOf(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  let bytes = '';
  for (const byte of new TextEncoder().encode(secret)) bytes += String.fromCharCode(byte);
  const base64 = btoa(bytes).replace(/=+$/, '');
  return [
    secret,
    encoded,
    encoded.replace(/%20/g, '+'),
    JSON.stringify(secret).slice(1, -1),
    base64,
    base64.replace(/\+/g, '-').replace(/\//g, '_'),
  ];
}

/**
 * A run that could be a key: letters, digits and `_-.+/=`, with `%` and `\\` so that a key
 * percent-encoded or JSON-escaped is one run, and line breaks, so that a key broken over two
 * lines is one too.
 */
const RUN = /(?:[A-Za-z0-9_\-.+/=%\\]|\r?\n)+/g;

/**
 * `text` with every token that could be a key masked: a run of 16 or more characters of letters,
 * digits and `_-.+/=` holding both letters and digits (the shape of keys, tokens, their base64
 * and hex), also when percent-encoded, JSON-escaped or broken over lines. For the words of a
 * server that may quote a key the SDK does not know (key management's new key): prose such as
 * "admins only" stays readable.
 */
export function maskKeyLike(text: string): string {
  return text.replace(RUN, (run) => {
    const joined = run.replace(/\r?\n/g, '');
    if (joined.length < 16 || !/[A-Za-z]/.test(joined) || !/\d/.test(joined)) return run;
    // A line break at either end is the text's, not the key's.
    const [, before = '', after = ''] = /^(\s*)[\s\S]*?(\s*)$/.exec(run) ?? [];
    return `${before}${MASK}${after}`;
  });
}

/**
 * The shortest part of a header that is masked on its own: shorter values (`theme=dark`,
 * `consent=1`) are no credential, and masking them would garble every message (`401`).
 */
const PART_MIN = 8;

/** The attributes a `Set-Cookie` line adds, pasted into a `Cookie` header at times: not values of the user's. */
const COOKIE_ATTRIBUTE = /^(path|domain|expires|max-age|samesite|secure|httponly|partitioned|priority)$/i;

/** A value without the quotes around it, and percent-decoded too where that changes it. */
function valueForms(value: string): string[] {
  const bare = value.trim().replace(/^"(.*)"$/, '$1');
  let decoded = bare;
  try {
    decoded = decodeURIComponent(bare);
  } catch {}
  return [...new Set([bare, decoded])].filter((form) => form.length >= PART_MIN);
}

/**
 * What to mask of a credential header's value, beside the whole value: a server may echo one part
 * of it (`session cookie_SESSION_55aa66bb expired`). Of a `Cookie`, each cookie's value; of an
 * `Authorization`-style value (`Scheme credential`), the credential, each `name=value` parameter's
 * value (`Digest response="…"`), and of `Basic`, the decoded `user:password` and the password.
 * Parts under 8 characters are left: they are no credential, and masking them garbles messages.
 */
export function credentialParts(name: string, value: string): string[] {
  const parts = [value];
  if (/^cookie$/i.test(name)) {
    for (const pair of value.split(';')) {
      const at = pair.indexOf('=');
      if (at < 0 || COOKIE_ATTRIBUTE.test(pair.slice(0, at).trim())) continue;
      parts.push(...valueForms(pair.slice(at + 1)));
    }
    return parts;
  }
  const [, scheme, credential] = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]*)\s+(\S[\s\S]*)$/.exec(value) ?? [];
  if (scheme === undefined || credential === undefined) return parts;
  parts.push(...valueForms(credential));
  for (const param of credential.split(',')) {
    const at = param.indexOf('=');
    if (at > 0) parts.push(...valueForms(param.slice(at + 1)));
  }
  if (/^basic$/i.test(scheme)) {
    try {
      const pair = new TextDecoder('utf-8', { fatal: true }).decode(
        Uint8Array.from(atob(credential.trim()), (c) => c.charCodeAt(0)),
      );
      const colon = pair.indexOf(':');
      parts.push(...[pair, colon < 0 ? '' : pair.slice(colon + 1)].filter((part) => part.length >= PART_MIN));
    } catch {}
  }
  return parts;
}
