// A redis-server for W6 (bench/w6.mjs), on a free port of 127.0.0.1, without persistence. Where
// redis-server is missing the bench stops and says how to install it (Debian: redis-server).
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

export async function startRedisServer() {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    throw new Error('W6 needs redis-server (Redis 7) on PATH: sudo apt-get install -y redis-server');
  }
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((resolve, reject) => {
    let seen = '';
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${seen}`)));
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('Ready to accept connections')) resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stdout.resume();
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}
