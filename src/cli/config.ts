import { CrmClient } from '../client';
import type { ClientOptions } from '../options';
import type { Command } from './commands';
import { UsageError } from './usage-error';

/** What the command line reads besides its arguments: the environment and files. */
export interface Environment {
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * A file's text (UTF-8), or a rejection with the error's `code`: `EFBIG` past `maxBytes`, so
   * that `/dev/zero` or a log file given by mistake cannot fill the memory.
   */
  readonly readFile: (path: string, maxBytes: number) => Promise<string>;
}

/** The connection options as parsed (`connectionOptions`). */
export interface ConnectionValues {
  readonly 'base-url'?: string | undefined;
  readonly tenant?: string | undefined;
  readonly timeout?: string | undefined;
  readonly 'max-retries'?: string | undefined;
  readonly 'api-key-file'?: string | undefined;
  readonly 'admin-token-file'?: string | undefined;
}

/** A whole number from a flag or a variable, or a usage error that names where it came from. */
export function wholeNumber(where: string, text: string | undefined): number | undefined {
  // An empty flag (`--max "$N"` with N unset) is refused, not read as the default; an empty
  // variable is unset before it gets here.
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new UsageError(`${where} must be a whole number, not "${text}"`);
  }
  return value;
}

/** The API root of a client that sends nothing (`crm sync plan`, `status`, `resolve`). */
const NOWHERE = 'https://nothing-is-sent.invalid';

/** The most of a secret's file that is read: a key or a token is far shorter. */
const SECRET_FILE_BYTES = 64 * 1024;

/**
 * A secret from a file: its first line, without surrounding spaces. No message shows its content.
 */
async function secretFrom(flag: string, path: string, { readFile }: Environment): Promise<string> {
  if (!path) throw new UsageError(`--${flag} needs a path, not an empty value`);
  let text: string;
  try {
    text = await readFile(path, SECRET_FILE_BYTES);
  } catch (error) {
    // Not the path: a key given where its path goes (`--api-key-file sk_live_...`) would be echoed.
    const code = (error as { code?: unknown }).code;
    if (code === 'EFBIG') throw new UsageError(`--${flag}: the file is larger than a key (${SECRET_FILE_BYTES} bytes)`);
    throw new UsageError(`--${flag}: cannot read the file${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  const secret = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (!secret) throw new UsageError(`--${flag}: ${path} is empty`);
  return secret;
}

const variable = (environment: Environment, name: string): string | undefined => environment.env[name] || undefined;

/** A whole number from its flag, else its variable: a refusal names the one that was read. */
const setting = (
  values: ConnectionValues,
  environment: Environment,
  flag: 'timeout' | 'max-retries',
  name: string,
): number | undefined =>
  values[flag] !== undefined ? wholeNumber(`--${flag}`, values[flag]) : wholeNumber(name, variable(environment, name));

/**
 * The client a command calls through, and the credentials it was given (to mask in what the
 * command prints beyond the SDK's errors): the flags, else the `CRM_*` variables. Secrets come only
 * from a file or the environment (a flag's value is visible to every user of the machine). What
 * the command needs and lacks is said before anything is sent.
 */
export async function clientFor(
  values: ConnectionValues,
  environment: Environment,
  needs: Command['endpoint']['auth'] | 'tenant',
  extra: Pick<ClientOptions, 'throttle'> = {},
): Promise<{ crm: CrmClient; secrets: string[] }> {
  const keyFile = values['api-key-file'];
  const tokenFile = values['admin-token-file'];
  // An empty path (`--api-key-file "$FILE"` with FILE unset) is refused, not read as no flag.
  const apiKey =
    keyFile !== undefined
      ? await secretFrom('api-key-file', keyFile, environment)
      : variable(environment, 'CRM_API_KEY');
  const adminToken =
    tokenFile !== undefined
      ? await secretFrom('admin-token-file', tokenFile, environment)
      : variable(environment, 'CRM_ADMIN_TOKEN');
  const tenantId = values.tenant ?? variable(environment, 'CRM_TENANT_ID');
  // `crm sync plan` and `resolve` send nothing, but the journal keys every record by tenant.
  if (needs === 'tenant' && !tenantId) throw new UsageError('No tenant: pass --tenant <id> or set CRM_TENANT_ID');
  if (needs === 'apiKey') {
    if (!apiKey) throw new UsageError('No API key: set CRM_API_KEY or pass --api-key-file <path>');
    if (!tenantId) throw new UsageError('No tenant: pass --tenant <id> or set CRM_TENANT_ID');
  }
  if (needs === 'admin' && !adminToken) {
    throw new UsageError("No administrator's token: set CRM_ADMIN_TOKEN or pass --admin-token-file <path>");
  }
  const crm = new CrmClient({
    // A command that sends nothing needs no API root; `.invalid` (RFC 2606) resolves nowhere.
    baseUrl: values['base-url'] ?? variable(environment, 'CRM_BASE_URL') ?? (needs === 'tenant' ? NOWHERE : undefined),
    tenantId,
    apiKey,
    adminToken,
    timeout: setting(values, environment, 'timeout', 'CRM_TIMEOUT'),
    maxRetries: setting(values, environment, 'max-retries', 'CRM_MAX_RETRIES'),
    ...extra,
  });
  return { crm, secrets: [apiKey, adminToken].filter((secret) => secret !== undefined) };
}
