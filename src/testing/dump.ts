import { parseArgs } from 'node:util';

/** The lists `crm-fake dump` shows, as the fake's export route names them. */
const TYPES = ['accounts', 'contacts', 'opportunities', 'activities'] as const;

/** `crm-fake dump --help`. */
const DUMP_USAGE = `Usage: crm-fake dump [--url <url>] [--tenant <id>] [--type <type>]

Prints what a running crm-fake holds, as CSV (an id column and the fields as the API names them),
so that a load can be checked from the shell: every type, each after a "# <type>" line, or the
one --type. Reads the tenant's key from CRM_API_KEY (never a flag).

Options:
  --url <url>      the fake's base URL (default: CRM_BASE_URL)
  --tenant <id>    the tenant (default: CRM_TENANT_ID)
  --type <type>    accounts, contacts, opportunities or activities (default: all four)
  -h, --help       print this help

Exit codes: 0 printed, 1 the fake did not answer or refused, 2 wrong usage.
`;

/** What `crm-fake dump` writes to and reads. */
export interface DumpIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (text: string) => Promise<void>;
  readonly err: (text: string) => void;
}

/**
 * `crm-fake dump`: the fake's records, read through its `GET /_fake/export/<type>.csv` admin
 * route with the tenant's key. Gives the exit code.
 */
export async function runDump(args: readonly string[], io: DumpIo): Promise<number> {
  let values: { url?: string | undefined; tenant?: string | undefined; type?: string | undefined; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      options: {
        url: { type: 'string' },
        tenant: { type: 'string' },
        type: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    io.err(`crm-fake dump: ${error instanceof Error ? error.message : String(error)}\n\n${DUMP_USAGE}`);
    return 2;
  }
  if (values.help) {
    await io.out(DUMP_USAGE);
    return 0;
  }
  const url = values.url ?? io.env.CRM_BASE_URL;
  const tenant = values.tenant ?? io.env.CRM_TENANT_ID;
  const key = io.env.CRM_API_KEY;
  const missing = !url ? '--url or CRM_BASE_URL' : !tenant ? '--tenant or CRM_TENANT_ID' : !key ? 'CRM_API_KEY' : '';
  if (missing) {
    io.err(`crm-fake dump: give ${missing}\n`);
    return 2;
  }
  const type = values.type;
  if (type !== undefined && !(TYPES as readonly string[]).includes(type)) {
    io.err(`crm-fake dump: --type must be ${TYPES.join(', ')}, not "${type.slice(0, 80)}"\n`);
    return 2;
  }
  const types = type === undefined ? TYPES : [type];
  let text = '';
  for (const name of types) {
    const where = new URL(`_fake/export/${name}.csv`, `${String(url).replace(/\/?$/, '/')}`);
    where.searchParams.set('tenantId', String(tenant));
    let response: Response;
    try {
      response = await fetch(where, { headers: { 'x-api-key': String(key) } });
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      io.err(`crm-fake dump: no answer from ${where.origin}${typeof cause === 'string' ? ` (${cause})` : ''}\n`);
      return 1;
    }
    const body = await response.text();
    if (!response.ok) {
      // The fake's own message: it never repeats the key.
      io.err(`crm-fake dump: ${where.origin} answered ${response.status} for ${name}: ${body.slice(0, 200)}\n`);
      return 1;
    }
    text += type === undefined ? `# ${name}\n${body}${body.endsWith('\n') ? '' : '\n'}` : body;
  }
  await io.out(text);
  return 0;
}
