import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { PagePromise } from '../core/page';
import { nearest } from '../internal/endpoint/suggest';
import { redactor } from '../internal/report/redaction';
import { flagsSpelled, isSecretFlag, quotedArgument } from './arguments';
import { type Command, commands, kebab, words } from './commands';
import { type ConnectionValues, clientFor, wholeNumber } from './config';
import { describeFailure, EXIT, exitCodeOf } from './failure';
import { connectionOptions, inputOption, listOptions, type OptionSpec } from './global-options';
import { columns, commandHelp, namespaceHelp, optionRows, topHelp } from './help';
import { parseInput } from './input';
import { invoke } from './invoke';
import { openApiDocument } from './openapi';
import { pageJson, printAll, printJson, write } from './output';
import type { SyncIo } from './sync/context';
import { UsageError } from './usage-error';

/** Everything `crm` touches outside its arguments, so that tests can give their own. */
export interface Io extends SyncIo {
  /** Standard input as text, for `--json -`: as `readFile`, an `EFBIG` rejection past `maxBytes`. */
  readonly readStdin: (maxBytes: number) => Promise<string>;
  /** The package's version, for `--version` and the MCP handshake. */
  readonly version: string;
}

type Values = Record<string, string | boolean | undefined>;

/** The most of a `--json` file or standard input that is read: an input is a record, far smaller. */
const JSON_BYTES = 16 * 1024 * 1024;

/** A negative number, which no option's name can be: `-5`, `-0.5`, `-.5`, `-1e3`. */
const NEGATIVE = /^-\.?\d/;

/**
 * The arguments as parseArgs takes them: a negative number after an option that takes a value is
 * that value (`--amount -5`, which parseArgs finds ambiguous), and a boolean given as
 * `--x=true` or `--x=false` is `--x` or `--no-x`. Nothing after `--` is touched.
 */
function spelled(args: readonly string[], specs: Readonly<Record<string, OptionSpec>>): string[] {
  const out: string[] = [];
  const typeOf = (name: string) => (Object.hasOwn(specs, name) ? specs[name]?.type : undefined);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return [...out, ...args.slice(i)];
    const next = args[i + 1];
    if (arg.startsWith('--') && typeOf(arg.slice(2)) === 'string' && next !== undefined && NEGATIVE.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
      continue;
    }
    const [, name, value] = /^--([^=]+)=(true|false)$/.exec(arg) ?? [];
    if (name && typeOf(name) === 'boolean') out.push(value === 'true' ? `--${name}` : `--no-${name}`);
    else out.push(arg);
  }
  return out;
}

/** `--help` (or `-h`) before any `--`: the help is printed whatever else is wrong with the line, as git does. */
const asksForHelp = (args: readonly string[]): boolean => {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
};

type Token = { kind: string; name?: string | undefined; rawName?: string | undefined; value?: string | undefined };

/**
 * An option given twice with two values (`--limit 1 --limit 2`, `--x --no-x`): parseArgs keeps
 * the last, silently. A script that builds a command line must not have one of them ignored.
 */
function refuseConflicts(tokens: readonly Token[]) {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const value = token.value ?? String(!token.rawName?.startsWith('--no-'));
    const before = seen.get(token.name);
    if (before !== undefined && before !== value)
      throw new Error(`Option '--${token.name}' is given twice, with two values`);
    seen.set(token.name, value);
  }
}

function parse(args: readonly string[], specs: Readonly<Record<string, OptionSpec>>, help: string) {
  if (asksForHelp(args)) return { values: { help: true } as Values, positionals: [] };
  const options: ParseArgsOptionsConfig = {};
  for (const [name, { type, short }] of Object.entries(specs)) options[name] = short ? { type, short } : { type };
  try {
    const { values, positionals, tokens } = parseArgs({
      args: spelled(args, specs),
      options,
      strict: true,
      allowPositionals: true,
      allowNegative: true,
      tokens: true,
    });
    refuseConflicts(tokens);
    return { values: values as Values, positionals };
  } catch (error) {
    const unknown = unknownOption(error, specs);
    if (unknown) throw new UsageError(unknown, help);
    // parseArgs names the option and what is wrong with it; its code and stack add nothing.
    throw new UsageError((error as Error).message, help);
  }
}

/**
 * An unknown option said plainly, with the nearest known ones (`--stauts`: did you mean
 * `--status`?), where parseArgs would advise passing it as a positional argument. Only the
 * option's name is repeated, never a value given with it (`--token=...`).
 */
function unknownOption(error: unknown, specs: Readonly<Record<string, OptionSpec>>): string | undefined {
  if ((error as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  // The name alone: a value glued to it by another character than `=` (`--token:sk_…`) is not repeated.
  const given = /^Unknown option '(--?[^'=:,;\s]+)/.exec((error as Error).message)?.[1];
  if (!given) return undefined;
  const long = Object.entries(specs).flatMap(([name, { type }]) =>
    type === 'boolean' ? [`--${name}`, `--no-${name}`] : [`--${name}`],
  );
  const near = given.startsWith('--') ? nearest(given, long) : [];
  const hint = near.length ? `; did you mean ${near.map((name) => `"${name}"`).join(' or ')}?` : '';
  return `Unknown option "${given}"${hint}`;
}

/** Flags: one per field of the input; booleans as `--x` and `--no-x`. */
const fieldOptions = (command: Command): Record<string, OptionSpec> =>
  Object.fromEntries(
    command.fields.map((field) => [
      field.flag,
      { type: field.schema.type === 'boolean' ? 'boolean' : 'string', help: '' } satisfies OptionSpec,
    ]),
  );

async function runCommand(command: Command, args: readonly string[], io: Io): Promise<number> {
  const help = `crm ${words(command)} --help`;
  const specs = {
    ...connectionOptions,
    ...(command.inputIn || command.positional ? inputOption : {}),
    ...(command.list ? listOptions : {}),
    ...fieldOptions(command),
  };
  const { values, positionals } = parse(args, specs, help);
  if (values.help) {
    await write(io.stdout, commandHelp(command));
    return EXIT.ok;
  }
  if (positionals.length > (command.positional ? 1 : 0)) {
    throw new UsageError(`Unexpected argument "${quotedArgument(positionals.at(-1) as string)}"`, help);
  }
  if (!values.all && (values.prefetch !== undefined || values.max !== undefined)) {
    throw new UsageError('--prefetch and --max go with --all', help);
  }
  const { positional, input } = await parseInput(
    command,
    values,
    positionals,
    values.json as string | undefined,
    (spec) =>
      spec === '-'
        ? io.readStdin(JSON_BYTES)
        : spec.startsWith('@')
          ? io.readFile(spec.slice(1), JSON_BYTES)
          : Promise.resolve(spec),
    help,
  );
  // Read before anything is sent: a list's request starts as soon as it is made, and one left
  // behind by a usage error would be sent, and its failure go unhandled.
  const prefetch = wholeNumber('--prefetch', values.prefetch as string | undefined);
  const max = wholeNumber('--max', values.max as string | undefined);
  const { crm, secrets } = await clientFor(values as ConnectionValues, io, command.endpoint.auth);
  // The SDK masks credentials in its errors; a server that echoes one in a record must not get
  // it printed either.
  const redact = redactor(secrets);
  if (!command.list) {
    await printJson(io, redact(await invoke(crm, command, { positional, input })));
    return EXIT.ok;
  }
  const list = invoke(crm, command, { positional, input }, prefetch === undefined ? {} : { prefetch }) as PagePromise<{
    id: string;
  }>;
  if (values.all) await printAll(io, list, max, redact);
  else await printJson(io, redact(pageJson(await list)));
  return EXIT.ok;
}

const OPENAPI_HELP = `Usage: crm openapi [options]

Prints an OpenAPI 3.1 document of the API (JSON), written from the SDK's endpoint table and schemas.

Options:
  -h, --help  print this help
`;

async function runOpenApi(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { help: connectionOptions.help }, 'crm openapi --help');
  if (positionals.length)
    throw new UsageError(`Unexpected argument "${quotedArgument(positionals[0] as string)}"`, 'crm openapi --help');
  if (values.help) {
    await write(io.stdout, OPENAPI_HELP);
    return EXIT.ok;
  }
  await printJson(io, openApiDocument({ version: io.version }));
  return EXIT.ok;
}

const mcpOptions = {
  'allow-writes': { type: 'boolean', help: 'also serve the tools that create and update records' },
} as const satisfies Record<string, OptionSpec>;

const MCP_HELP = `Usage: crm mcp [--allow-writes] [options]

Serves the API as a Model Context Protocol server on stdio: one tool per endpoint
(contacts_list, opportunities_get, ...), for the tenant and key of the environment.
Read tools only unless --allow-writes; key management is never a tool.
Needs the optional peer dependency @modelcontextprotocol/sdk.

Options:
${columns(optionRows({ ...mcpOptions, ...connectionOptions }))}
`;

async function runMcp(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...mcpOptions, ...connectionOptions }, 'crm mcp --help');
  if (positionals.length)
    throw new UsageError(`Unexpected argument "${quotedArgument(positionals[0] as string)}"`, 'crm mcp --help');
  if (values.help) {
    await write(io.stdout, MCP_HELP);
    return EXIT.ok;
  }
  const { crm, secrets } = await clientFor(values as ConnectionValues, io, 'apiKey');
  const { runMcpServer } = await import('./mcp');
  await runMcpServer({ crm, allowWrites: values['allow-writes'] === true, version: io.version, secrets });
  return EXIT.ok;
}

/**
 * An unknown command, or an option where the command should be (`crm --tenant t contacts list`):
 * an option is named without its value, which may be a secret (`--token=...`).
 */
function unknownCommand(words: readonly string[], help?: string): UsageError {
  const option = words.find((word) => word.startsWith('-'));
  if (option) {
    return new UsageError(
      `Unknown command: "${option.split('=', 1)[0]}" is an option, and options go after the command (crm <namespace> <command> [options])`,
      help,
    );
  }
  // The nearest commands, as git suggests them: `contacts lst` -> `contacts list`, `contact` -> `contacts`.
  const known =
    words.length === 1
      ? [...new Set(commands.map((c) => kebab(c.namespace))), 'openapi', 'mcp', 'sync']
      : commands.filter((c) => kebab(c.namespace) === words[0]).map((c) => kebab(c.method));
  const given = words.at(-1) ?? '';
  const near = nearest(given, known).map((word) => (words.length === 1 ? word : `${words[0]} ${word}`));
  const hint = near.length ? `; did you mean ${near.map((c) => `"${c}"`).join(' or ')}?` : '';
  return new UsageError(`Unknown command "${words.map(quotedArgument).join(' ')}"${hint}`, help);
}

async function dispatch(argv: readonly string[], io: Io): Promise<number> {
  if (argv.some(isSecretFlag)) {
    throw new UsageError(
      'Secrets are never flag values (other users can read a command line): set CRM_API_KEY or CRM_ADMIN_TOKEN, or pass --api-key-file or --admin-token-file',
    );
  }
  const [first, second, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(topHelp());
    return EXIT.usage;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    await write(io.stdout, topHelp());
    return EXIT.ok;
  }
  if (first === '--version') {
    await write(io.stdout, `${io.version}\n`);
    return EXIT.ok;
  }
  const after = [second, ...rest].filter((arg) => arg !== undefined);
  if (first === 'openapi') return runOpenApi(after, io);
  if (first === 'mcp') return runMcp(after, io);
  if (first === 'sync') {
    // Loaded on demand: no other command evaluates the sync engine, its journal or its readers.
    const { runSync } = await import('./sync/command');
    return runSync(after, io, parse);
  }
  const namespace = commands.find((command) => kebab(command.namespace) === first)?.namespace;
  if (!namespace) throw unknownCommand([first]);
  if (second === undefined || second === '--help' || second === '-h') {
    const text = namespaceHelp(namespace);
    if (second === undefined) {
      io.stderr.write(text);
      return EXIT.usage;
    }
    await write(io.stdout, text);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.namespace === namespace && kebab(c.method) === second);
  if (!command) throw unknownCommand([first, second], `crm ${first} --help`);
  return runCommand(command, rest, io);
}

/**
 * Runs `crm` with these arguments (without the node and script paths) and returns the exit code.
 * Output goes to `io`; a failure is told on stderr, as one line on a terminal, else as JSON.
 */
export async function main(typed: readonly string[], io: Io): Promise<number> {
  const argv = flagsSpelled(typed);
  try {
    return await dispatch(argv, io);
  } catch (error) {
    const asJson = argv.includes('--json-errors') || !io.stderr.isTTY;
    io.stderr.write(describeFailure(error, asJson));
    return exitCodeOf(error);
  }
}
