// A Postgres for W8 (bench/w8.mjs): a new cluster (initdb) in a temporary directory, on a free
// port of 127.0.0.1, run as the postgres user when root (Postgres refuses root). Where Postgres is
// missing the bench stops and says how to install it (Debian: postgresql).
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function binDir() {
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((v) => existsSync(join(debian, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) {
    throw new Error('W8 needs Postgres (initdb and postgres): sudo apt-get install -y postgresql');
  }
  return join(debian, versions[0], 'bin');
}

export async function startPostgresServer() {
  const bin = binDir();
  const root = process.getuid?.() === 0;
  const user = root
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
        gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
      }
    : {};
  const dir = mkdtempSync(join(tmpdir(), 'crm-w8-pg-'));
  if (root) chownSync(dir, user.uid, user.gid);
  execFileSync(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '--auth=trust', '--locale=C', '--no-sync'], {
    stdio: 'ignore',
    ...user,
  });
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  // synchronous_commit stays on: a journal's commit waits for its WAL flush, as in production.
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', dir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=100'],
    { stdio: ['ignore', 'ignore', 'pipe'], ...user },
  );
  await new Promise((resolve, reject) => {
    let seen = '';
    child.once('exit', (code) => reject(new Error(`postgres exited (${code}): ${seen}`)));
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('ready to accept connections')) resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stderr.resume();
  return {
    connection: { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGINT');
      }),
  };
}
