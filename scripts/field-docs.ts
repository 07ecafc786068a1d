/**
 * Writes, ahead of time, what the TSDoc of the SDK's named types says of each field, for the
 * OpenAPI document and the MCP tools: one place (the TSDoc an editor shows) describes a field
 * everywhere, and none of it is in the SDK's bundle, since only the `crm` bin reads the file.
 *
 * For every schema exported by src/schemas/ (`OpportunityCreateInputSchema`, ...), the type a
 * caller passes or reads (`z.input` of it) is asked for its properties, and each property gives:
 * - `description`: its TSDoc text;
 * - `enum`: the documented values of an open enum (`OpenEnumValue<T>`: the literals of `T`),
 *   which a response may widen, so that the document can name them and stay open;
 * - `format` and `integer`: its `@format` and `@integer` tags, which say what the spec says of a
 *   response field the SDK accepts more loosely (an activity's date-time, a page count).
 *
 * Run by `npm run generate`; `test/cli/field-docs.test.ts` fails when the file is stale.
 */
import ts from 'typescript';

/** What the TSDoc says of one field. */
export interface FieldDoc {
  description?: string;
  enum?: string[];
  format?: string;
  integer?: true;
}

const root = new URL('..', import.meta.url).pathname;

/** The `as const` tuples a schema module exports (`ACTIVITY_TYPES`): an enum's values in the spec's order. */
type Lists = readonly (readonly string[])[];

function docsOf(checker: ts.TypeChecker, type: ts.Type, lists: Lists): Record<string, FieldDoc> {
  const out: Record<string, FieldDoc> = {};
  for (const property of checker.getPropertiesOfType(type)) {
    const doc: FieldDoc = {};
    const text = ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
    if (text) doc.description = text;
    for (const tag of property.getJsDocTags(checker)) {
      if (tag.name === 'format') doc.format = ts.displayPartsToString(tag.text).trim();
      if (tag.name === 'integer') doc.integer = true;
    }
    const declared = property.declarations?.[0];
    if (declared) {
      const values = openEnumValues(checker.getTypeOfSymbolAtLocation(property, declared));
      // A union's members come in the checker's order; the list that holds the same values, in its own.
      if (values)
        doc.enum = [...(lists.find((l) => l.length === values.length && values.every((v) => l.includes(v))) ?? values)];
    }
    out[property.name] = doc;
  }
  return out;
}

/** The literals of `T | (string & Record<never, never>)`, or undefined for any other type. */
function openEnumValues(type: ts.Type): string[] | undefined {
  if (!type.isUnion()) return undefined;
  const literals = type.types.filter((t): t is ts.StringLiteralType => t.isStringLiteral()).map((t) => t.value);
  const open = type.types.some((t) => t.isIntersection() && t.types.some((p) => p.flags & ts.TypeFlags.String));
  return open && literals.length ? literals : undefined;
}

const programOf = () =>
  ts.createProgram([`${root}src/index.ts`], {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
  });

/** Every exported schema of src/schemas/ with the docs of its input's fields, by export name. */
export function fieldDocs(program: ts.Program = programOf()): Record<string, Record<string, FieldDoc>> {
  const checker = program.getTypeChecker();
  const out: Record<string, Record<string, FieldDoc>> = {};
  const files = program.getSourceFiles().filter((f) => f.fileName.startsWith(`${root}src/schemas/`));
  for (const file of files.sort((a, b) => a.fileName.localeCompare(b.fileName))) {
    const module = checker.getSymbolAtLocation(file);
    if (!module) continue;
    const exported = checker.getExportsOfModule(module);
    const lists = exported.map((symbol) => {
      const type = checker.getTypeOfSymbolAtLocation(symbol, file);
      if (!checker.isTupleType(type)) return [];
      return checker.getTypeArguments(type as ts.TypeReference).flatMap((t) => (t.isStringLiteral() ? [t.value] : []));
    });
    for (const symbol of exported) {
      if (!symbol.name.endsWith('Schema') || !(symbol.flags & ts.SymbolFlags.Variable)) continue;
      const type = checker.getTypeOfSymbolAtLocation(symbol, file);
      const zod = checker.getPropertyOfType(type, '_zod');
      const input = zod && checker.getPropertyOfType(checker.getTypeOfSymbolAtLocation(zod, file), 'input');
      if (!input) continue;
      const inputType = checker.getTypeOfSymbolAtLocation(input, file);
      // A schema of one value (`GrantIdSchema`, a string) has no fields to describe.
      if (!(inputType.flags & ts.TypeFlags.Object) && !inputType.isUnionOrIntersection()) continue;
      const docs = docsOf(checker, inputType, lists);
      if (Object.keys(docs).length) out[symbol.name] = docs;
    }
  }
  return out;
}

/** The TSDoc of each row of the endpoint table (src/endpoints.ts): its summary, by endpoint name. */
export function endpointSummaries(program: ts.Program = programOf()): Record<string, string> {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(`${root}src/endpoints.ts`);
  const module = file && checker.getSymbolAtLocation(file);
  const table = module && checker.getExportsOfModule(module).find((symbol) => symbol.name === 'endpoints');
  if (!file || !table) throw new Error('src/endpoints.ts exports no `endpoints` table');
  const out: Record<string, string> = {};
  for (const row of checker.getPropertiesOfType(checker.getTypeOfSymbolAtLocation(table, file))) {
    const text = ts.displayPartsToString(row.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
    if (!text) throw new Error(`src/endpoints.ts: the row ${row.name} has no TSDoc summary`);
    out[row.name] = text;
  }
  return out;
}

/** The generated module's source. */
export function fieldDocsSource(): string {
  const program = programOf();
  return `// Generated by \`npm run generate\` (scripts/field-docs.ts) from the TSDoc of src/schemas/ and src/endpoints.ts: do not edit.
// What each field of each exported schema is, and each endpoint, for the CLI, the OpenAPI document and the MCP tools.

/** What the TSDoc says of one field. */
export interface FieldDoc {
  readonly description?: string;
  readonly enum?: readonly string[];
  readonly format?: string;
  readonly integer?: true;
}

/** By schema export name, then by field. */
export const fieldDocs: Readonly<Record<string, Readonly<Record<string, FieldDoc>>>> = ${JSON.stringify(fieldDocs(program), null, 2)};

/** By endpoint name, the TSDoc of its row in src/endpoints.ts: the spec's words for it. */
export const endpointSummaries: Readonly<Record<string, string>> = ${JSON.stringify(endpointSummaries(program), null, 2)};
`;
}
