// The journal a `crm sync` command names, opened the same way for every command: a SQLite file
// (--journal) or a Postgres schema (--postgres, with --schema). pg is an optional peer: it is
// imported only when --postgres is given.
import { redactor } from '../../internal/report/redaction';
import { type SyncJournal, SyncJournalError, sqliteJournal } from '../../sync';
import { UsageError } from '../usage-error';

/** The journal a command line names. */
export type JournalTarget =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      /** The connection string: never shown (its password is one of {@link JournalTarget} secrets). */
      readonly connectionString: string;
      readonly schema: string;
      /** What of it may be shown: its host and database, never its user's password. */
      readonly shown: string;
      /** Its password, decoded and as written: masked wherever the command writes. */
      readonly secrets: readonly string[];
    };

/** The option `--postgres` given without a value: read from DATABASE_URL. */
const FROM_ENV = '';

/**
 * `--postgres` followed by nothing or by another option takes its connection string from
 * `DATABASE_URL`: written `--postgres=` so that the parser, which gives every string option a
 * value, reads it as empty.
 */
export function postgresWithoutValue(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    const next = args[i + 1];
    return arg === '--postgres' && (next === undefined || next.startsWith('-')) ? `--postgres=${FROM_ENV}` : arg;
  });
}

/** The secrets of a connection string: its password, as written in a URL, decoded, and in key=value form. */
function secretsOf(connectionString: string): string[] {
  const secrets: string[] = [];
  try {
    const url = new URL(connectionString);
    if (url.password) {
      secrets.push(url.password);
      try {
        secrets.push(decodeURIComponent(url.password));
      } catch {
        // A malformed escape: the password as written is masked.
      }
    }
    // node-postgres also reads a password given as a query parameter.
    for (const value of url.searchParams.getAll('password')) secrets.push(value, encodeURIComponent(value));
  } catch {
    // Not a URL: libpq's key=value form, its password quoted or not.
    for (const match of connectionString.matchAll(/password\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))/gi)) {
      const value = match[1] ?? match[2];
      if (value) secrets.push(value, value.replace(/\\(.)/g, '$1'));
    }
  }
  // The whole string too: a message that quotes it is masked whole.
  return [...new Set([connectionString, ...secrets])].filter((secret) => secret.length > 0);
}

/** Host, port and database of a connection string, for messages; never its user or password. */
function shownOf(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
    return `${url.hostname || 'localhost'}${url.port ? `:${url.port}` : ''}${database ? `/${database}` : ''}`;
  } catch {
    const host = /(?:^|\s)host\s*=\s*(\S+)/i.exec(connectionString)?.[1];
    const database = /(?:^|\s)dbname\s*=\s*(\S+)/i.exec(connectionString)?.[1];
    return `${host ?? 'localhost'}${database ? `/${database}` : ''}`;
  }
}

/** The journal the options name: exactly one of `--journal <file>` and `--postgres [<connection string>]`. */
export function journalTarget(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
  help: string,
): JournalTarget {
  const { journal, postgres, schema } = values;
  if (journal !== undefined && postgres !== undefined) {
    throw new UsageError('Give one journal: --journal <file> or --postgres <connection string>, not both', help);
  }
  if (postgres === undefined) {
    if (schema !== undefined)
      throw new UsageError('--schema names a schema of the Postgres journal: give --postgres', help);
    if (typeof journal !== 'string' || journal === '') {
      throw new UsageError('A journal is required: --journal <file>, or --postgres <connection string>', help);
    }
    // A connection string given as a file would be echoed, password and all, in every message that names the file.
    if (/^postgres(ql)?:/i.test(journal)) {
      throw new UsageError('--journal takes a SQLite file: give a Postgres connection string to --postgres', help);
    }
    return { kind: 'sqlite', path: journal };
  }
  const connectionString = postgres === FROM_ENV ? env.DATABASE_URL : String(postgres);
  if (connectionString === undefined || connectionString === '') {
    throw new UsageError('--postgres without a connection string reads DATABASE_URL, which is not set', help);
  }
  if (schema !== undefined && (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))) {
    throw new UsageError(
      '--schema must be a lower-case SQL identifier (letters, digits and _, at most 63 characters)',
      help,
    );
  }
  return {
    kind: 'postgres',
    connectionString,
    schema: typeof schema === 'string' ? schema : 'crm_sync',
    shown: shownOf(connectionString),
    secrets: secretsOf(connectionString),
  };
}

/** What a command is given: the journal, how to name it, and how to close it (its pool with it). */
export interface OpenedJournal {
  readonly journal: SyncJournal;
  /** `the journal acme.db`, `the Postgres journal in schema crm_sync on db.example:5432/erp`. */
  readonly name: string;
  readonly close: () => Promise<void>;
}

/** What node-postgres's default export gives the CLI. */
interface PgModule {
  readonly Pool: new (config: {
    connectionString: string;
    max: number;
    connectionTimeoutMillis: number;
    application_name: string;
  }) => {
    connect(): Promise<never>;
    end(): Promise<void>;
    on(event: 'error', listener: (error: Error) => void): unknown;
    query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  };
}

/**
 * Opens the journal `target` names, for every `crm sync` command alike. `readOnly` (status):
 * a SQLite file is read without being written, and a Postgres schema that holds no journal is
 * said so rather than created.
 */
export async function openJournal(
  target: JournalTarget,
  { readOnly, help }: { readonly readOnly: boolean; readonly help: string },
): Promise<OpenedJournal> {
  if (target.kind === 'sqlite') {
    const journal = sqliteJournal(target.path, readOnly ? { readOnly: true } : {});
    return { journal, name: `the journal ${target.path}`, close: async () => journal.close() };
  }
  const pg = await import('pg').then(
    (module) => ((module as { default?: unknown }).default ?? module) as PgModule,
    () => {
      throw new UsageError(
        '--postgres needs the pg package (node-postgres), an optional peer dependency: npm install pg',
        help,
      );
    },
  );
  const { postgresJournal } = await import('../../postgres/postgres-journal');
  // Enough clients for apply's claims, commits and renewals at its highest concurrency's pace,
  // and a connection that cannot be made within 15 s fails rather than hang the command.
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: 10,
    connectionTimeoutMillis: 15_000,
    application_name: 'crm sync',
  });
  // An idle connection that drops is the pool's to replace: the journal's next statement says what failed.
  pool.on('error', () => {});
  const name = `the Postgres journal in schema ${target.schema} on ${target.shown}`;
  const close = async () => {
    await pool.end().catch(() => {});
  };
  try {
    if (readOnly) {
      const { rows } = await pool
        .query('SELECT pg_catalog.to_regclass($1) IS NOT NULL AS made', [`"${target.schema}".format`])
        .catch((error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          throw new SyncJournalError(
            'unavailable',
            `The Postgres journal in schema ${target.schema} on ${target.shown} could not be read (${why}).`,
            { cause: error },
          );
        });
      if ((rows[0] as { made?: unknown } | undefined)?.made !== true) {
        throw new UsageError(
          `No journal in schema ${target.schema} on ${target.shown}: crm sync apply makes one`,
          help,
        );
      }
    }
    const journal = postgresJournal(pool, { schema: target.schema });
    return {
      journal,
      name,
      close: async () => {
        await journal.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Masks the connection string's password in an error's message (and its cause's), in place: a
 * driver's message may quote what it was given, and crm prints messages as they are.
 */
export function redactError(error: unknown, target: JournalTarget): unknown {
  if (target.kind !== 'postgres') return error;
  const mask = redactor(target.secrets);
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    current.message = mask(current.message);
    if (current.stack) current.stack = mask(current.stack);
    current = current.cause;
  }
  return error;
}
