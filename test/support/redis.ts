import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';

/*
 * A real redis-server for the tests of crm-integration-sdk/redis, never a mock: started on a free
 * port of 127.0.0.1, without persistence, stopped by the test. Where redis-server is missing, it
 * is installed with apt-get when this process may (root, as on CI); otherwise the test fails with
 * the command to run. It is never skipped.
 */

const INSTALL = 'apt-get install -y redis-server';

/** The redis-server on PATH, installed first where it is missing and this process may install it. */
export function redisServerCommand(): string {
  const found = () => {
    try {
      return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  let command = found();
  if (command) return command;
  const root = process.getuid?.() === 0;
  const apt = (() => {
    try {
      execFileSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  if (root && apt) {
    execFileSync('sh', ['-c', `(${INSTALL} || (apt-get update && ${INSTALL})) > /dev/null`], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    command = found();
    if (command) return command;
  }
  throw new Error(
    `The tests of crm-integration-sdk/redis need redis-server (Redis 7) on PATH. Install it: sudo ${INSTALL}`,
  );
}

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A running redis-server: where it listens, a client factory, and how to stop it or start it again. */
export interface TestRedis {
  readonly port: number;
  /** A new ioredis client of this server; closed by `close()`. */
  client(options?: { lazyConnect?: boolean }): Redis;
  /** Stops the server (the clients see it go, as when Redis fails). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Stops the server and closes every client made. */
  close(): Promise<void>;
}

async function launch(command: string, port: number): Promise<ChildProcess> {
  const child = spawn(command, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${seen}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('Ready to accept connections')) resolve();
    });
  });
  child.removeAllListeners('exit');
  return child;
}

/** Starts a redis-server on a free port. */
export async function startRedis(): Promise<TestRedis> {
  const command = redisServerCommand();
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(command, port);
  const clients: Redis[] = [];
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      running.kill('SIGKILL');
    });
  };
  return {
    port,
    client(options = {}) {
      // Errors are the tests' to see through the SDK; ioredis would print each one otherwise.
      const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, ...options });
      redis.on('error', () => {});
      clients.push(redis);
      return redis;
    },
    stop,
    async restart() {
      await stop();
      child = await launch(command, port);
    },
    async close() {
      for (const redis of clients) redis.disconnect();
      await stop();
    },
  };
}
