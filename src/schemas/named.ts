/**
 * Types that give the SDK's schemas their named types (`Opportunity`, not `{ id: string; ... }`)
 * and prove, at compile time, that each named type says exactly what its schema infers.
 *
 * A schema is built by a zod constructor cast to one of the `...SchemaOf<T>` types below, such as
 * `(z.looseObject as RecordSchemaOf<Opportunity>)({ ... })`. The cast is erased, so the bundle is
 * byte for byte what a plain `z.looseObject({ ... })` makes (a checked alias of a module-local
 * schema would cost a variable per schema in every app's bundle). The cast's type takes the shape,
 * compares what zod infers from it with `T`, and refuses the shape when they differ, naming the
 * fields at fault.
 *
 * The named types are type literals, not interfaces: zod's object helpers (`z.extend()`,
 * `z.pick()`, ...) take a `ZodMiniObject`, whose inferred type has a string index signature, and
 * only a type literal is assignable to one without declaring it.
 */
import type * as z from 'zod/mini';

/**
 * Whether A and B are assignable both ways and have the same keys. Assignability alone would let
 * a type forget an optional field; the key check does not. (Keys are compared as strings: an index
 * signature's `keyof` is `string | number` or `string` depending on how it was written.)
 */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A & string] extends [keyof B & string]
      ? [keyof B & string] extends [keyof A & string]
        ? true
        : false
      : false
    : false
  : false;

/** What a shape must also be when `T` and the type zod infers from it differ: no shape is. */
interface Mismatch<T, Inferred> {
  readonly 'the named type and its schema differ': {
    readonly onlyInNamedType: Exclude<keyof T, keyof Inferred>;
    readonly onlyInSchema: Exclude<keyof Inferred, keyof T>;
    readonly differing: {
      [K in keyof T & keyof Inferred]: Same<T[K], Inferred[K]> extends true ? never : K;
    }[keyof T & keyof Inferred];
  };
}

/** Nothing more when `T` names exactly what zod infers, else the mismatch. */
type Verdict<T, Inferred> = Same<T, Inferred> extends true ? unknown : Mismatch<T, Inferred>;

interface NamedObjectInternals<
  Out extends z.core.$InferObjectOutput<Shape, Config['out']>,
  In extends z.core.$InferObjectInput<Shape, Config['in']>,
  Shape extends z.core.$ZodShape,
  Config extends z.core.$ZodObjectConfig,
> extends z.core.$ZodObjectInternals<Shape, Config> {
  output: Out;
  input: In;
}

/**
 * A zod/mini object schema whose inferred types are named: `z.infer` gives `Out` and `z.input`
 * gives `In`. It is a `ZodMiniObject` in every other way (`.shape`, `z.extend()`, `safeParse()`).
 */
export interface NamedObject<
  Out extends z.core.$InferObjectOutput<Shape, Config['out']>,
  In extends z.core.$InferObjectInput<Shape, Config['in']>,
  Shape extends z.core.$ZodShape,
  Config extends z.core.$ZodObjectConfig,
> extends z.ZodMiniObject<Shape, Config> {
  _zod: NamedObjectInternals<Out, In, Shape, Config>;
}

// A record's fields, as zod infers them from a shape without the `[k: string]: unknown` that
// z.looseObject() adds to its types: the record schemas stay loose at run time, their types do not.
type RecordFields<S extends z.core.$ZodShape> = z.core.$InferObjectOutput<S, z.core.$strip['out']>;
type RecordInput<S extends z.core.$ZodShape> = z.core.$InferObjectInput<S, z.core.$strip['in']>;

/**
 * `z.looseObject`, typed to build the schema of the response record `T` (no index signature).
 * Its types say `$strip`, which differs from `$loose` only in types: unknown keys stay at run time.
 */
export type RecordSchemaOf<T> = <S extends z.core.$ZodLooseShape>(
  shape: S & Verdict<T, RecordFields<S>>,
) => T extends RecordFields<S> ? (T extends RecordInput<S> ? NamedObject<T, T, S, z.core.$strip> : never) : never;

type StrictOutput<S extends z.core.$ZodShape> = z.core.$InferObjectOutput<S, z.core.$strict['out']>;
type StrictInput<S extends z.core.$ZodShape> = z.core.$InferObjectInput<S, z.core.$strict['in']>;

/** `z.strictObject`, typed to build the schema of the request input `T`: `z.input` of it is `T`. */
export type InputSchemaOf<T> = <S extends z.core.$ZodLooseShape>(
  shape: S & Verdict<T, StrictInput<S>>,
) => T extends StrictInput<S> ? NamedObject<StrictOutput<S>, T, S, z.core.$strict> : never;

interface NamedPipeInternals<In extends z.input<A>, A extends z.core.SomeType, B extends z.core.SomeType>
  extends z.core.$ZodPipeInternals<A, B> {
  input: In;
}

/** A zod/mini pipe whose `z.input` is the named type `In`. */
export interface NamedPipe<In extends z.input<A>, A extends z.core.SomeType, B extends z.core.SomeType>
  extends z.ZodMiniPipe<A, B> {
  _zod: NamedPipeInternals<In, A, B>;
}

type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type KeysOfEach<T> = T extends unknown ? keyof T : never;

/**
 * Nothing more when the union `T` narrows the object input `Inferred` only in its `Paired` fields
 * (a check of the schema, not its types, enforces the narrowing): every member of `T` is an
 * `Inferred`, the members name together exactly its keys, and outside `Paired` each says exactly
 * what it says.
 */
type NarrowedVerdict<T, Inferred, Paired extends PropertyKey> = [T] extends [Inferred]
  ? Same<KeysOfEach<T>, keyof Inferred> extends true
    ? Verdict<OmitEach<T, Paired>, Omit<Inferred, Paired>>
    : Mismatch<T, Inferred>
  : Mismatch<T, Inferred>;

/**
 * `z.pipe`, typed to build the schema of the request input `T` from a checked object schema and a
 * transform: `z.input` of it is `T`, a union that only the object's check makes exact.
 */
export type NarrowedInputSchemaOf<T, Paired extends PropertyKey> = <
  A extends z.ZodMiniObject,
  B extends z.core.$ZodType<unknown, z.output<A>>,
>(
  in_: A & NarrowedVerdict<T, z.input<A>, Paired>,
  out: B,
) => [T] extends [infer U extends z.input<A>] ? NamedPipe<U, A, B> : never;
