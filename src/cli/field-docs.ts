import type * as z from 'zod/mini';
import * as account from '../schemas/account';
import * as activity from '../schemas/activity';
import * as contact from '../schemas/contact';
import * as opportunity from '../schemas/opportunity';
import * as pagination from '../schemas/pagination';
import { type FieldDoc, fieldDocs } from './field-docs.generated';

/*
 * What the TSDoc of src/schemas/ says of each field (written ahead of time by `npm run generate`),
 * laid on the JSON Schema zod writes: a description for every property, and what the spec says of
 * a response field that the SDK reads more loosely than the spec types it (an open enum's values,
 * a date-time, an integer), said so that the schema still accepts what the SDK accepts.
 */

/** Each exported schema by its export name, the key of the generated docs. */
const names = new Map<unknown, string>(
  Object.entries({ ...account, ...activity, ...contact, ...opportunity, ...pagination })
    .filter(([name]) => name.endsWith('Schema'))
    .map(([name, schema]) => [schema, name]),
);

type Json = Record<string, unknown>;

/** A response property widened as the SDK reads it: open enums stay open, formats and integers are said. */
function outputProperty(property: Json, doc: FieldDoc): Json {
  let out = property;
  if (doc.enum) {
    // Any string parses (a server may add values before the SDK knows them): the documented values,
    // or any other string, or null where the field may be null.
    const nullable = Array.isArray(property.type) && property.type.includes('null');
    const { type: _, ...rest } = property;
    out = {
      ...rest,
      anyOf: [{ type: 'string', enum: [...doc.enum] }, { type: nullable ? ['string', 'null'] : 'string' }],
    };
  }
  if (doc.format) out = { ...out, format: doc.format };
  if (doc.integer && Array.isArray(out.type))
    out = { ...out, type: out.type.map((t) => (t === 'number' ? 'integer' : t)) };
  else if (doc.integer && out.type === 'number') out = { ...out, type: 'integer' };
  return out;
}

/** `json` (zod's JSON Schema of `schema`) with its properties described, and widened for responses. */
export function withFieldDocs(schema: z.ZodMiniType, json: Json, io: 'input' | 'output'): Json {
  const docs = fieldDocs[names.get(schema) ?? ''];
  const properties = json.properties as Record<string, Json> | undefined;
  if (!docs || !properties) return json;
  const described = Object.entries(properties).map(([name, property]) => {
    const doc = docs[name];
    if (!doc) return [name, property];
    // A request field's format (a contact's email) is said too, where zod's check writes a pattern.
    const input = doc.format && property.format === undefined ? { ...property, format: doc.format } : property;
    const widened = io === 'output' ? outputProperty(property, doc) : input;
    return [name, doc.description ? { description: doc.description, ...widened } : widened];
  });
  return { ...json, properties: Object.fromEntries(described) };
}
