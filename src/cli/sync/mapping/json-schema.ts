import * as z from 'zod/mini';
import { SyncMapSchema } from './schema';

/**
 * The JSON Schema of a mapping file, as shipped in `crm-integration-sdk/sync-map.schema.json`:
 * zod's rendering of {@link SyncMapSchema}, with the rules it cannot write (exactly one of
 * `column` and `value`, at most one transform) said in the title.
 */
export const syncMapJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(SyncMapSchema, { io: 'input' }),
  $id: 'https://unpkg.com/crm-integration-sdk/sync-map.schema.json',
  title:
    'crm sync --map: each type\'s "key", reference columns and "fields" (a column name, or an object with exactly one of "column" and "value" and at most one of "date", "number", "boolean", "values")',
});
