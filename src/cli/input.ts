import { faultText } from '../internal/endpoint/json-fault';
import { type Command, type Field, type FieldSchema, words } from './commands';
import { UsageError } from './usage-error';

/** What `--json` and the field flags make of a command's input. */
export interface ParsedInput {
  readonly positional: unknown;
  readonly input: Record<string, unknown> | undefined;
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

const typesOf = (schema: FieldSchema): readonly string[] =>
  typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);

/**
 * A flag's text as the field's type: a number where the schema takes one and the text is one.
 * Anything else stays text, for the SDK's schema to refuse with its own message ("Expected
 * number, received string"), so the command line and the SDK never disagree on what is valid.
 */
function typedValue(field: Field, text: string, help: string): unknown {
  const types = typesOf(field.schema);
  if (!(types.includes('number') || types.includes('integer')) || !NUMBER.test(text.trim())) return text;
  const value = Number(text);
  // 12345678901234567890 would be sent as 12345678901234567000: refused rather than changed.
  if (/^\s*[-+]?\d+\s*$/.test(text) && !Number.isSafeInteger(value)) {
    throw new UsageError(`--${field.flag}: ${text.trim()} is past the whole numbers JSON carries exactly`, help);
  }
  return value;
}

/** `--json` as given: inline JSON, `@path` for a file's, `-` for standard input's. */
export type JsonSource = (spec: string) => Promise<string>;

async function jsonInput(spec: string, read: JsonSource, help: string): Promise<Record<string, unknown>> {
  const where = spec === '-' ? 'standard input' : spec.startsWith('@') ? spec.slice(1) : 'the --json value';
  let text: string;
  try {
    text = await read(spec);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === 'EFBIG') throw new UsageError(`--json: ${where} is larger than an input may be`, help);
    throw new UsageError(`--json: cannot read ${where}${typeof code === 'string' ? ` (${code})` : ''}`, help);
  }
  let parsed: unknown;
  // An editor may start a file with a byte order mark; JSON.parse does not take it.
  const json = text.replace(/^\uFEFF/, '');
  try {
    parsed = JSON.parse(json);
  } catch {
    // JSON.parse's message quotes the text around the fault, which may be a key: only where.
    throw new UsageError(`--json: ${where} is not valid JSON${faultText(json)}`, help);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError('--json must be a JSON object of the input fields', help);
  }
  return parsed as Record<string, unknown>;
}

/**
 * The input of a command: the `--json` object, with the field flags over it (a flag names one
 * field, so it wins), and the positional from the argument or, failing that, from the JSON.
 */
export async function parseInput(
  command: Command,
  values: Readonly<Record<string, string | boolean | undefined>>,
  positionals: readonly string[],
  json: string | undefined,
  read: JsonSource,
  help: string,
): Promise<ParsedInput> {
  const fromJson = json === undefined ? {} : await jsonInput(json, read, help);
  const input: Record<string, unknown> = { ...fromJson };
  let positional: unknown = positionals[0];
  if (command.positional && positional === undefined && Object.hasOwn(input, command.positional.name)) {
    positional = input[command.positional.name];
  }
  if (command.positional) delete input[command.positional.name];
  for (const field of command.fields) {
    const value = values[field.flag];
    if (value !== undefined) input[field.name] = typeof value === 'boolean' ? value : typedValue(field, value, help);
  }
  const extra = Object.keys(input);
  if (!command.inputIn && extra.length) {
    throw new UsageError(`${words(command)} takes no input fields, not: ${extra.join(', ')}`, help);
  }
  return { positional, input: command.inputIn ? input : undefined };
}
