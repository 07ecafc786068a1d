import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { PostgresPool } from '../../src/postgres/pool';

/*
 * A real Postgres for the tests of crm-integration-sdk/postgres, never a mock: a new cluster
 * (initdb) in a temporary directory, started on a free port of 127.0.0.1, stopped and deleted by
 * the test. As root, initdb and postgres run as the `postgres` user (Postgres refuses root).
 * Where Postgres is missing, Debian's package is installed with apt-get when this process may
 * (root, as on CI); otherwise the test fails with the command to run. It is never skipped.
 */

const INSTALL = 'apt-get install -y postgresql';

/** The directory of Debian's newest Postgres binaries, or of those on PATH. */
function binDir(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'postgres')) && existsSync(join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(debian, versions[0], 'bin');
  }
  try {
    const found = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    return found ? join(found, '..') : undefined;
  } catch {
    return undefined;
  }
}

const has = (command: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Postgres's bin directory, installed first where it is missing and this process may install it. */
export function postgresBinDir(): string {
  let dir = binDir();
  if (dir) return dir;
  if (process.getuid?.() === 0 && has('apt-get')) {
    execFileSync('sh', ['-c', `(${INSTALL} || (apt-get update && ${INSTALL})) > /dev/null`], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    dir = binDir();
    if (dir) return dir;
  }
  throw new Error(
    `The tests of crm-integration-sdk/postgres need Postgres (initdb and postgres, Debian's postgresql package). Install it: sudo ${INSTALL}`,
  );
}

/** The uid and gid of the `postgres` user, when this process is root (Postgres refuses to run as root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'The tests of crm-integration-sdk/postgres run as root and need the postgres user to run Postgres: sudo apt-get install -y postgresql (or: useradd postgres)',
    );
  }
}

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * When the claims in `schema` end (their earliest lease end, epoch seconds) now, and then once a
 * worker has renewed them: waits up to 20 s (a busy machine) for their end to move.
 */
export async function claimsRenewed(pool: pg.Pool, schema: string): Promise<{ first: number; later: number }> {
  const until = async () =>
    Number((await pool.query(`SELECT min(extract(epoch FROM expires_at)) AS t FROM ${schema}.claims`)).rows[0].t);
  const first = await until();
  let later = first;
  for (let i = 0; i < 200 && later === first; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    later = await until();
  }
  return { first, later };
}

/** A running Postgres: where it listens, a pool factory, and how to lose it or start it again. */
export interface TestPostgres {
  readonly port: number;
  /** The options of a `pg.Pool` (or `pg.Client`) of this server. */
  readonly connection: { host: string; port: number; user: string; database: string };
  /** A new pool of this server (errors of idle clients are ignored); ended by `close()`. */
  pool(options?: pg.PoolConfig): pg.Pool;
  /** Stops the server at once, as a crash would (its clients see their connections drop). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops the server, ends every pool made and deletes the cluster. */
  close(): Promise<void>;
}

async function launch(bin: string, dir: string, port: number, user: ReturnType<typeof runAs>): Promise<ChildProcess> {
  const child = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      // A test loses processes, never the machine: no fsync, as on a CI runner's throwaway disk.
      '-c',
      'fsync=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], ...user },
  );
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`postgres exited (${code}): ${seen}`)));
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('ready to accept connections')) resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stderr?.resume();
  return child;
}

/**
 * `pool`, each statement its clients run noted in `statements` (a statement with no parameters
 * may be several, sent in one round trip): what a journal asks of Postgres, counted.
 */
export function countingPool(pool: pg.Pool, statements: string[]): PostgresPool {
  return {
    connect: async () => {
      const client = await pool.connect();
      return {
        query: (text: string, values?: unknown[]) => {
          statements.push(text);
          return client.query(text, values);
        },
        release: (error?: Error | boolean) => client.release(error),
        on: (event: 'error', listener: (error: Error) => void) => client.on(event, listener),
        removeListener: (event: 'error', listener: (error: Error) => void) => client.removeListener(event, listener),
      };
    },
  };
}

/** A TCP relay to a Postgres, whose connections can go silent (see {@link silentRelay}). */
export interface SilentRelay {
  readonly port: number;
  /** Its connections open now forward nothing more, either way, and are never closed: as a NAT that forgot them. */
  silence(): void;
  close(): Promise<void>;
}

/** A relay of 127.0.0.1 to the Postgres on `port`: connections opened after silence() forward again. */
export async function silentRelay(port: number): Promise<SilentRelay> {
  const open: { inbound: Socket; outbound: Socket; silent: boolean }[] = [];
  const server = createServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    const pair = { inbound, outbound, silent: false };
    open.push(pair);
    inbound.on('data', (data) => pair.silent || outbound.write(data));
    outbound.on('data', (data) => pair.silent || inbound.write(data));
    const close = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', close).on('close', close);
    outbound.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    silence() {
      for (const pair of open) pair.silent = true;
    },
    async close() {
      for (const { inbound, outbound } of open) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Starts a new Postgres cluster on a free port. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'crm-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  execFileSync(
    join(bin, 'initdb'),
    ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { stdio: ['ignore', 'ignore', 'pipe'], ...user },
  );
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(bin, dir, port, user);
  const pools: pg.Pool[] = [];
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      // Immediate shutdown: the backends go at once, as in a crash, and the next start recovers.
      running.kill('SIGQUIT');
    });
  };
  const connection = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  return {
    port,
    connection,
    pool(options = {}) {
      const pool = new pg.Pool({ ...connection, connectionTimeoutMillis: 10_000, ...options });
      pool.on('error', () => {});
      pools.push(pool);
      return pool;
    },
    stop,
    async restart() {
      await stop();
      child = await launch(bin, dir, port, user);
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
