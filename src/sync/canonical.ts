import { CrmValidationError } from '../core/errors';

/** The version of the canonical form and its hash, leading each hash: a new form reads as changed, never as equal. */
const FORM = 'c1:';

/** A record's data in canonical form: keys sorted, dates as ISO strings, undefined fields left out. */
export interface Canonical {
  /** The canonical object, what the create sends. */
  readonly value: Record<string, unknown>;
  /** Its JSON. */
  readonly json: string;
  /** A hash of `json`. */
  readonly hash: string;
}

/**
 * The canonical objects' constructor. Their prototype is empty, frozen and inherits nothing, not
 * even Object.prototype: a field they lack reads as undefined whatever is on Object.prototype,
 * and no name sets a prototype, so what is sent is what is hashed. (Object.create(null) would
 * do the same, but makes each object a slow dictionary: twice the time of W7b's hashing.)
 */
const Fields = function Fields() {} as unknown as new () => Record<string, unknown>;
Fields.prototype = Object.freeze(Object.create(null));

/** The one field name refused at any depth: JSON.parse makes it an own field, an assignment a prototype. */
const PROTO = '__proto__';
/** Thrown by normalize() when it meets one; canonical() then finds where, off the hot path. */
const PROTO_MET = Symbol('__proto__ met');

function normalize(value: unknown): unknown {
  if (value instanceof Date) {
    // An invalid date is kept as one, so that the schema names it rather than a null.
    return Number.isNaN(value.getTime()) ? value : value.toISOString();
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const out = new Fields();
    for (const key of Object.keys(value).sort()) {
      if (key === PROTO) throw PROTO_MET;
      const field = (value as Record<string, unknown>)[key];
      if (field !== undefined) out[key] = normalize(field);
    }
    return out;
  }
  return value;
}

/** Where normalize() met `__proto__` first: the same walk (sorted keys, depth first), with the path. */
function protoPath(value: unknown, path: string[]): string[] | undefined {
  if (value === null || typeof value !== 'object' || value instanceof Date) return undefined;
  const keys = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value).sort();
  for (const key of keys) {
    if (key === PROTO && !Array.isArray(value)) return [...path, key];
    const found = protoPath((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return undefined;
}

function protoRefused(data: Record<string, unknown>): CrmValidationError {
  const path = protoPath(data, ['data']) ?? ['data', PROTO];
  return new CrmValidationError(
    [
      {
        field: path.join('.'),
        path,
        message: `A field named "${PROTO}" is refused: JavaScript takes it for the object's prototype, so that its fields would be sent unchecked and left out of the journal`,
      },
    ],
    'Invalid record',
  );
}

/**
 * `data` in canonical form, as objects that inherit nothing (see `Fields`). Throws a
 * `CrmValidationError` for a field named `__proto__` at any depth (its path under `data`), and
 * a TypeError for what JSON cannot hold (a BigInt, a cycle), which the record then fails with.
 */
export function canonical(data: Record<string, unknown>): Canonical {
  let value: Record<string, unknown>;
  try {
    value = normalize(data) as Record<string, unknown>;
  } catch (error) {
    throw error === PROTO_MET ? protoRefused(data) : error;
  }
  const json = JSON.stringify(value);
  return { value, json, hash: hashOf(json) };
}

/**
 * A 64-bit hash of a string (two 32-bit multiply-xorshift lanes, as cyrb53 does): fast in any
 * runtime, without node:crypto or an async digest. It tells changed from unchanged, not a secret.
 */
function hashOf(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${FORM}${(h1 >>> 0).toString(16).padStart(8, '0')}${(h2 >>> 0).toString(16).padStart(8, '0')}`;
}

/** The fields of `now` whose value differs from `before`'s (JSON of the last synced data). A field gone from `now` is not one. */
export function changedFields(
  before: string,
  now: Record<string, unknown>,
): Record<string, { readonly from: unknown; readonly to: unknown }> {
  let old: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(before);
    old = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    old = {};
  }
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(now)) {
    const from = old[field];
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}
