/** An option of parseArgs, with the words its help gives it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** `<url>`: what the value is, for the help. */
  readonly value?: string;
  readonly help: string;
}

/** The options every command takes: where the CRM is, as whom, and how errors are told. */
export const connectionOptions = {
  'base-url': { type: 'string', value: '<url>', help: 'the API root (default: CRM_BASE_URL)' },
  tenant: { type: 'string', value: '<id>', help: 'the tenant id (default: CRM_TENANT_ID)' },
  timeout: { type: 'string', value: '<ms>', help: 'per attempt, in milliseconds (default: CRM_TIMEOUT, else 30000)' },
  'max-retries': {
    type: 'string',
    value: '<n>',
    help: 'retries of a failed attempt (default: CRM_MAX_RETRIES, else 2)',
  },
  'api-key-file': {
    type: 'string',
    value: '<path>',
    help: 'a file holding the API key (default: CRM_API_KEY); never pass a key as a flag',
  },
  'admin-token-file': {
    type: 'string',
    value: '<path>',
    help: "a file holding the administrator's token (default: CRM_ADMIN_TOKEN)",
  },
  'json-errors': { type: 'boolean', help: 'errors as a JSON object on stderr, even on a terminal' },
  help: { type: 'boolean', short: 'h', help: 'print this help' },
} as const satisfies Record<string, OptionSpec>;

/** The input of any endpoint's command, whole. */
export const inputOption = {
  json: {
    type: 'string',
    value: '<json|@file|->',
    help: 'the whole input as a JSON object, from a file (@path) or standard input (-); flags win over it',
  },
} as const satisfies Record<string, OptionSpec>;

/** What a list command adds. */
export const listOptions = {
  all: { type: 'boolean', help: 'every record, as NDJSON (one JSON object a line), page after page' },
  prefetch: { type: 'string', value: '<n>', help: 'with --all: pages fetched ahead, 0 to 16 (default: 0)' },
  max: { type: 'string', value: '<n>', help: 'with --all: stop after this many records' },
} as const satisfies Record<string, OptionSpec>;
