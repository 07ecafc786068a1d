import { messageOf } from '../../schemas/messages';

/**
 * Passed to every parse, so that issues read in English. zod/mini loads no locale, and setting
 * one with `z.config()` would change the messages of an application's own zod schemas too.
 */
export const parseContext = { error: messageOf };
