import type * as z from 'zod/mini';
import { NonEmptyString, OpenObject } from './common';
import { inEnglish } from './messages';
import type { NamedObject } from './named';

/**
 * What `grants.resolve()` returns: an object whose fields the spec does not show, so every field
 * is `unknown`, to be checked before use.
 */
export type GrantResolution = { [field: string]: unknown };
/**
 * What `apiKey.status()` returns: an object whose fields the spec does not show, so every field is
 * `unknown`, to be checked before use.
 */
export type ApiKeyStatus = { [field: string]: unknown };
/**
 * What `apiKey.generate()` returns: an object whose fields the spec does not show, the new key
 * among them, so every field is `unknown`, to be checked before use.
 */
export type ApiKeyGenerateResult = { [field: string]: unknown };

// Aliases of OpenObject, typed by hand as written out here (the build's declarations then name only
// public types). Both ways are checked: NamedObject requires the type to be what OpenObject infers,
// and the assignment requires what it infers to be the type.
/** What `grants.resolve()` returns. The spec does not show its fields. */
export const GrantResolutionSchema: NamedObject<
  GrantResolution,
  GrantResolution,
  Record<never, never>,
  z.core.$loose
> = OpenObject;
/** What `apiKey.status()` returns. The spec does not show its fields. */
export const ApiKeyStatusSchema: NamedObject<
  ApiKeyStatus,
  ApiKeyStatus,
  Record<never, never>,
  z.core.$loose
> = OpenObject;
/** What `apiKey.generate()` returns, the new key among its fields. The spec does not show them. */
export const ApiKeyGenerateResultSchema: NamedObject<
  ApiKeyGenerateResult,
  ApiKeyGenerateResult,
  Record<never, never>,
  z.core.$loose
> = OpenObject;
/** A grant id, as `grants.resolve()` takes it. */
export const GrantIdSchema = NonEmptyString;

// What a call says of a bad value, the exported schemas say too (messages.ts).
inEnglish(GrantResolutionSchema, ApiKeyStatusSchema, ApiKeyGenerateResultSchema, GrantIdSchema);
