import type * as z from 'zod/mini';
import { NonEmptyString, OpenObject } from './common';

/** What `grants.resolve()` returns. The spec does not show its fields. */
export const GrantResolutionSchema = OpenObject;
/** What `apiKey.status()` returns. The spec does not show its fields. */
export const ApiKeyStatusSchema = OpenObject;
/** What `apiKey.generate()` returns, the new key among its fields. The spec does not show them. */
export const ApiKeyGenerateResultSchema = OpenObject;
/** A grant id, as `grants.resolve()` takes it. */
export const GrantIdSchema = NonEmptyString;

/** What `grants.resolve()` returns: an object whose fields the spec does not show. */
export type GrantResolution = z.infer<typeof GrantResolutionSchema>;
/** What `apiKey.status()` returns: an object whose fields the spec does not show. */
export type ApiKeyStatus = z.infer<typeof ApiKeyStatusSchema>;
/** What `apiKey.generate()` returns: an object whose fields the spec does not show. */
export type ApiKeyGenerateResult = z.infer<typeof ApiKeyGenerateResultSchema>;
