/**
 * Writes, ahead of time, a validator for every endpoint's response envelope, from the endpoint
 * table's zod schemas (why: PERFORMANCE.md, "Generated response validators"). A validator answers
 * whether zod would accept a body, and nothing else, checking the parsed JSON where it lies.
 *
 * Only the kinds of schema that responses use are written; any other kind (a strict object, a
 * transform, a check) stops the generator, so a schema change cannot make a validator lenient.
 *
 * Run by `npm run generate`; `test/performance/envelope-validators.test.ts` fails when the file
 * is stale, and holds every validator to zod's verdict.
 */
import { endpoints } from '../src/endpoints';

interface Def {
  readonly type: string;
  readonly shape?: Record<string, Schema>;
  readonly catchall?: Schema;
  readonly element?: Schema;
  readonly innerType?: Schema;
  readonly values?: readonly unknown[];
  readonly entries?: Record<string, unknown>;
  readonly checks?: readonly unknown[];
}
interface Schema {
  readonly _zod: { readonly def: Def };
}

const defOf = (schema: Schema): Def => schema._zod.def;

/** One allowed value as source: the literals and enums of responses are strings, numbers, booleans. */
function literal(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
    return JSON.stringify(value);
  throw new Error(`A response literal cannot be written as source: ${String(value)}`);
}

/** An expression true when `v` is refused, for schemas that need no statements; else undefined. */
function refused(schema: Schema, v: string): string | undefined {
  const def = defOf(schema);
  if (def.checks?.length) throw new Error(`A response ${def.type} has checks: the validator does not write them`);
  switch (def.type) {
    case 'string':
    case 'boolean':
      return `typeof ${v} !== "${def.type}"`;
    case 'number':
      // zod's number: finite, so NaN and Infinity are refused (Number.isFinite is false for a non-number).
      return `!Number.isFinite(${v})`;
    case 'literal':
      return (def.values ?? []).map((value) => `${v} !== ${literal(value)}`).join(' && ');
    case 'enum':
      return Object.values(def.entries ?? {})
        .map((value) => `${v} !== ${literal(value)}`)
        .join(' && ');
    case 'unknown':
    case 'any':
      return 'false';
    case 'optional':
    case 'nullable': {
      const { present, inner } = presence(def, v);
      const refusal = refused(inner, v);
      return refusal === undefined ? undefined : `${present} && (${refusal})`;
    }
    default:
      return undefined;
  }
}

/**
 * Of an optional or nullable schema: the condition under which `v` is present, and the schema it
 * must then satisfy. Optional and nullable at once (zod's nullish) is one loose comparison.
 */
function presence(def: Def, v: string): { readonly present: string; readonly inner: Schema } {
  const inner = def.innerType as Schema;
  const other = def.type === 'optional' ? 'nullable' : 'optional';
  if (defOf(inner).type === other) return { present: `${v} != null`, inner: defOf(inner).innerType as Schema };
  return { present: `${v} !== ${def.type === 'optional' ? 'undefined' : 'null'}`, inner };
}

/**
 * The functions of the generated file. An object with fields gets a function of its own, written
 * once: a record is checked by the same function in the envelope of a single record and in the
 * envelope of a page.
 */
class Validators {
  readonly sources: string[] = [];
  readonly #byBody = new Map<string, string>();

  /** The name of the function that checks `schema`, an object, written on first need. */
  functionFor(schema: Schema): string {
    const body = new Body(this);
    body.object(schema, 'input', 1);
    const text = body.lines.join('\n');
    let name = this.#byBody.get(text);
    if (name === undefined) {
      name = `check${this.#byBody.size}`;
      this.#byBody.set(text, name);
      this.sources.push(`function ${name}(input) {\n${text}\n  return true;\n}\n`);
    }
    return name;
  }
}

/** Writes the statements of one function that return false when `v` is refused. */
class Body {
  readonly lines: string[] = [];
  readonly #validators: Validators;
  #names = 0;

  constructor(validators: Validators) {
    this.#validators = validators;
  }

  name(prefix: string): string {
    const name = `${prefix}${this.#names}`;
    this.#names += 1;
    return name;
  }

  check(schema: Schema, v: string, depth: number): void {
    const pad = '  '.repeat(depth);
    const simple = refused(schema, v);
    if (simple !== undefined) {
      if (simple !== 'false') this.lines.push(`${pad}if (${simple}) return false;`);
      return;
    }
    const def = defOf(schema);
    switch (def.type) {
      case 'optional':
      case 'nullable': {
        const { present, inner } = presence(def, v);
        this.lines.push(`${pad}if (${present}) {`);
        this.check(inner, v, depth + 1);
        this.lines.push(`${pad}}`);
        return;
      }
      case 'object':
        if (Object.keys(def.shape ?? {}).length === 0) this.object(schema, v, depth);
        else this.lines.push(`${pad}if (!${this.#validators.functionFor(schema)}(${v})) return false;`);
        return;
      case 'array': {
        const index = this.name('i');
        const item = this.name('v');
        this.lines.push(`${pad}if (!Array.isArray(${v})) return false;`);
        this.lines.push(`${pad}for (let ${index} = 0; ${index} < ${v}.length; ${index}++) {`);
        this.lines.push(`${pad}  const ${item} = ${v}[${index}];`);
        this.check(def.element as Schema, item, depth + 1);
        this.lines.push(`${pad}}`);
        return;
      }
      default:
        throw new Error(`A response schema of type ${def.type}: the validator does not write it`);
    }
  }

  /** An object's own checks, in place. */
  object(schema: Schema, v: string, depth: number): void {
    const def = defOf(schema);
    // A loose object keeps every key, so the body is what zod would return. A stripping or
    // strict object would not be: refuse to write it rather than validate it wrongly.
    if (def.type !== 'object' || def.catchall === undefined || defOf(def.catchall).type !== 'unknown') {
      throw new Error('A response object is not loose: the validator writes only z.looseObject()');
    }
    const pad = '  '.repeat(depth);
    this.lines.push(`${pad}if (typeof ${v} !== "object" || ${v} === null || Array.isArray(${v})) return false;`);
    // zod copies a loose object's keys by assignment, which loses an own `__proto__` key (JSON.parse
    // makes one): such a body goes to zod, so that both paths return the same.
    this.lines.push(`${pad}if (Object.hasOwn(${v}, "__proto__")) return false;`);
    // One variable for every field, not one each: the minified bundle repeats the same few
    // characters field after field, which gzip stores once (the bundle's size, PERFORMANCE.md).
    const entries = Object.entries(def.shape ?? {});
    if (entries.length > 0) this.lines.push(`${pad}let field;`);
    for (const [key, child] of entries) {
      this.lines.push(`${pad}field = ${v}[${JSON.stringify(key)}];`);
      this.check(child, 'field', depth);
    }
  }
}

/** The functions that check `schema`, an object, as source: the last one checks it whole. */
export function validatorSource(schema: object): string {
  const validators = new Validators();
  validators.functionFor(schema as Schema);
  return validators.sources.join('\n');
}

/** The source of src/internal/validate/envelope-validators.generated.ts. */
export function envelopeValidatorsSource(): string {
  const validators = new Validators();
  const entries = Object.values(endpoints).map(
    (endpoint) =>
      `  ${JSON.stringify(`${endpoint.method} ${endpoint.path}`)}: ${validators.functionFor(endpoint.envelope as unknown as Schema)},`,
  );
  const records = Object.values(endpoints)
    .filter((endpoint) => endpoint.list)
    .map(
      (endpoint) =>
        `  ${JSON.stringify(`${endpoint.method} ${endpoint.path}`)}: ${validators.functionFor(endpoint.data as unknown as Schema)},`,
    );
  return [
    '// Generated by `npm run generate` (scripts/envelope-validators.ts) from the zod schemas of the',
    '// endpoint table. Do not edit.',
    '// @ts-nocheck',
    '',
    ...validators.sources,
    '/** Whether zod would accept a response body, by `METHOD path`: the body is then what zod returns. */',
    'export const envelopeValidators: Readonly<Record<string, (input: unknown) => boolean>> = {',
    ...entries,
    '};',
    '',
    '/** Whether zod would accept one record of a page, by `METHOD path` of the list. */',
    'export const recordValidators: Readonly<Record<string, (input: unknown) => boolean>> = {',
    ...records,
    '};',
    '',
  ].join('\n');
}
