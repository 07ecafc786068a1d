import { type Command, commands, type Field, kebab, words } from './commands';
import { connectionOptions, inputOption, listOptions, type OptionSpec } from './global-options';

export const columns = (rows: readonly (readonly [string, string])[]): string => {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`.trimEnd()).join('\n');
};

export const optionRows = (options: Readonly<Record<string, OptionSpec>>): [string, string][] =>
  Object.entries(options).map(([name, spec]) => [
    `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`,
    spec.help,
  ]);

/** A field's type in words, from its JSON Schema: what a flag's value must be. */
export function typeOf({ schema }: Field): string {
  const types = typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);
  if (schema.enum) return `one of: ${schema.enum.join(', ')}`;
  if (schema.format === 'date-time') return 'date-time (ISO 8601, such as 2027-01-31T00:00:00Z)';
  const limits: string[] = [];
  if (schema.minimum !== undefined) limits.push(`>= ${schema.minimum}`);
  if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) limits.push(`<= ${schema.maximum}`);
  if (schema.minLength !== undefined) limits.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) limits.push(`max length ${schema.maxLength}`);
  return [types.join(' or ') || 'any', ...limits].join(', ');
}

const fieldRows = (command: Command): [string, string][] =>
  command.fields.map((field) => {
    const boolean = field.schema.type === 'boolean';
    const flag = boolean ? `--${field.flag}, --no-${field.flag}` : `--${field.flag} <value>`;
    return [flag, `${typeOf(field)}${field.required ? ' (required)' : ''}`];
  });

/** `crm contacts create [options]`, `crm opportunities get <id> [options]`. */
const usageOf = (command: Command): string =>
  `crm ${words(command)}${command.positional ? ` <${kebab(command.positional.name)}>` : ''} [options]`;

/** The help of one command: what it does, its HTTP call, its flags and the options it takes. */
export function commandHelp(command: Command): string {
  const { endpoint } = command;
  const sections = [
    `Usage: ${usageOf(command)}`,
    `${command.summary}\n${endpoint.method} /${endpoint.path}${endpoint.auth === 'admin' ? ' (administrator token)' : ''}`,
  ];
  if (command.positional) sections.push(`Argument:\n  <${kebab(command.positional.name)}>  (required)`);
  if (command.fields.length) sections.push(`Fields:\n${columns(fieldRows(command))}`);
  const options = {
    ...(command.inputIn || command.positional ? inputOption : {}),
    ...(command.list ? listOptions : {}),
  };
  if (Object.keys(options).length) sections.push(`Input and output:\n${columns(optionRows(options))}`);
  sections.push(`Options:\n${columns(optionRows(connectionOptions))}`);
  if (command.list) {
    sections.push(
      'Prints the first page as { data, pagination }; with --all, every record as NDJSON.\n' +
        `Example: crm ${words(command)} --all > ${kebab(command.namespace)}.ndjson`,
    );
  }
  return `${sections.join('\n\n')}\n`;
}

const commandRows = (list: readonly Command[]): [string, string][] =>
  list.map((command) => [usageOf(command).replace(/^crm | \[options\]$/g, ''), command.summary]);

/** The help of a namespace: its commands. */
export const namespaceHelp = (namespace: string): string =>
  `Usage: crm ${kebab(namespace)} <command> [options]\n\nCommands:\n${columns(
    commandRows(commands.filter((command) => command.namespace === namespace)),
  )}\n\nRun crm ${kebab(namespace)} <command> --help for its fields.\n`;

/** Exit codes, as README.md's "Command line" lists them. */
const EXIT_CODES = `Exit codes:
  0  success
  1  anything else (a bug: please report it)
  2  invalid input or usage (nothing was sent)
  3  authentication or permission refused
  4  not found
  5  rate limited (after the retries)
  6  connection failed or timed out
  7  any other error the API answered with
  8  a response that failed validation
  9  crm sync apply finished, but some records failed or are in doubt, or removals were refused
  10 crm sync: another run holds the journal's lock (try again later)
  11 crm sync: the journal is corrupt, not a journal, or written by a newer crm
  12 crm sync: the journal cannot be opened or written (the message says why)
  13 crm sync plan found invalid or blocked records (--allow-invalid: 0)`;

/** `crm --help`: every command, the extra commands, the options and the exit codes. */
export const topHelp = (): string =>
  `${[
    'Usage: crm <namespace> <command> [id] [options]',
    'Every endpoint of the CRM integration API from a shell: JSON on stdout, errors on stderr.',
    `Commands:\n${columns([
      ...commandRows(commands),
      ['openapi', 'print an OpenAPI 3.1 document of the API'],
      ['mcp [--allow-writes]', 'serve the API to AI agents over MCP (stdio)'],
      ['sync plan|apply|status|resolve|ids', 'load and sync a tenant from CSV or NDJSON files (crm sync --help)'],
    ])}`,
    `Options:\n${columns([...optionRows(connectionOptions), ['--version', 'print the version']])}`,
    'The API key comes from CRM_API_KEY or --api-key-file, never from a flag: other users of the\nmachine can read the command lines of its processes.',
    EXIT_CODES,
  ].join('\n\n')}\n`;
