import { http, passthrough } from 'msw';
import { describe, expect, test } from 'vitest';
import { server } from '../support/msw-server';
import { runNode as run } from '../support/run-node';

// `npm test` builds dist/ first; the demo and the bin run on it as a user would run them.

describe('npm run demo', () => {
  test('runs every example against the fake server over real HTTP and exits 0', async () => {
    const demo = run(['examples/demo.ts']);
    const code = await demo.exit;
    const { stdout, stderr } = demo.output();

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Started the fake CRM on http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toContain('The admin generated an API key');
    expect(stdout).toContain('Created account "Acme Ltd", 2 contacts');
    expect(stdout).toContain('stage proposal, probability 60%');
    expect(stdout).toContain('Paged through its activities with for await: {"call":1,"meeting":1,"email":1}');
    expect(stdout).toContain('Resolved grant grant_demo');
    expect(stdout).toContain('404 handled');
    expect(stdout).toContain('validation handled: type, subject');
    expect(stdout.trimEnd().endsWith('Done.')).toBe(true);
  });
});

describe('the crm-fake bin', () => {
  test('prints its URL and credentials, and answers with them over HTTP', async () => {
    const bin = run(['dist/crm-fake.js', '--port', '0']);
    try {
      await new Promise<void>((resolve) => {
        bin.child.stdout.on('data', () => {
          if (bin.output().stdout.includes('CRM_ADMIN_TOKEN=')) resolve();
        });
      });
      const vars = Object.fromEntries(
        bin
          .output()
          .stdout.split('\n')
          .filter((line) => line.startsWith('CRM_'))
          .map((line) => line.split('=') as [string, string]),
      );
      expect(vars.CRM_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      // No SDK: a plain HTTP request, as curl or another language would send it (MSW lets loopback through).
      server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
      const url = `${vars.CRM_BASE_URL}/integrations/v1/contacts?tenantId=${vars.CRM_TENANT_ID}&limit=2`;
      const body = await (await fetch(url, { headers: { 'x-api-key': vars.CRM_API_KEY ?? '' } })).text();
      const json = JSON.parse(body) as { success: boolean; data: unknown[]; pagination: { limit: number } };
      expect(json.success).toBe(true);
      expect(json.data).toHaveLength(2);
      expect(json.pagination.limit).toBe(2);
    } finally {
      bin.child.kill('SIGTERM');
      expect(await bin.exit).toBe(0);
    }
  });

  test.each(['--help', '-h'])('%s prints the usage with every option to stdout and exits 0', async (flag) => {
    const bin = run(['dist/crm-fake.js', flag]);

    expect(await bin.exit).toBe(0);
    const { stdout, stderr } = bin.output();
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^Usage: crm-fake \[options\]/);
    for (const option of [
      '--port <n>',
      '--host <name>',
      '--records <n>',
      '--rate-limit <n>',
      '--burst <n>',
      '--latency <ms>',
      '--tenants <ids>',
      '--seed <file>',
      '-h, --help',
    ])
      expect(stdout).toContain(option);
  });

  test.each([
    [['--nope'], "crm-fake: Unknown option '--nope'"],
    [['--records', 'many'], 'crm-fake: --records must be a whole number, not "many"'],
    [['--port', '70000'], 'crm-fake: --port must be a whole number from 0 to 65535, not "70000"'],
    [['--port'], "crm-fake: Option '--port <value>' argument missing"],
    [['4010'], "crm-fake: Unexpected argument '4010'"],
    [['--rate-limit', '0'], 'crm-fake: --rate-limit must be a number of requests per second above 0, not "0"'],
    [['--rate-limit', 'fast'], 'crm-fake: --rate-limit must be a number of requests per second above 0, not "fast"'],
    [['--rate-limit', '1e3'], 'crm-fake: --rate-limit must be a number of requests per second above 0, not "1e3"'],
    [['--rate-limit', '10', '--burst', '0'], 'crm-fake: --burst must be 1 or more, not "0"'],
    [['--rate-limit', '10', '--burst', '2.5'], 'crm-fake: --burst must be a whole number, not "2.5"'],
    [['--burst', '5'], 'crm-fake: --burst needs --rate-limit'],
    [['--latency=-5'], 'crm-fake: --latency must be a whole number from 0 to 2147483647, not "-5"'],
    [['--latency', '20ms'], 'crm-fake: --latency must be a whole number from 0 to 2147483647, not "20ms"'],
  ])('%j is wrong usage: the reason and the usage on stderr, exit 2, no stack trace', async (args, reason) => {
    const bin = run(['dist/crm-fake.js', ...args]);

    expect(await bin.exit).toBe(2);
    const { stdout, stderr } = bin.output();
    expect(stdout).toBe('');
    expect(stderr.startsWith(reason)).toBe(true);
    expect(stderr).toContain('Usage: crm-fake [options]');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  test('--rate-limit, --burst and --latency limit and delay what it serves, and its first line says so', async () => {
    const bin = run(['dist/crm-fake.js', '--rate-limit', '0.5', '--burst', '2', '--latency', '40']);
    try {
      await new Promise<void>((resolve) => {
        bin.child.stdout.on('data', () => {
          if (bin.output().stdout.includes('CRM_ADMIN_TOKEN=')) resolve();
        });
      });
      const { stdout } = bin.output();
      expect(stdout).toMatch(
        /^crm-fake listening on http:\/\/127\.0\.0\.1:\d+ \(0\.5 requests\/s per key, burst 2; 40 ms latency\)\n/,
      );
      const vars = Object.fromEntries(
        stdout
          .split('\n')
          .filter((line) => line.startsWith('CRM_'))
          .map((line) => line.split('=') as [string, string]),
      );
      server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
      const url = `${vars.CRM_BASE_URL}/integrations/v1/contacts?tenantId=${vars.CRM_TENANT_ID}`;
      const headers = { 'x-api-key': vars.CRM_API_KEY ?? '' };
      const started = performance.now();
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await fetch(url, { headers }));

      // A lower bound only: three answers, each delayed by 40 ms.
      expect(performance.now() - started).toBeGreaterThanOrEqual(119);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(answers[2]?.headers.get('retry-after')).toBe('2');
      expect(await answers[2]?.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    } finally {
      bin.child.kill('SIGTERM');
      expect(await bin.exit).toBe(0);
    }
  });

  test('a port already in use is reported in one line, exit 1', async () => {
    const { createServer } = await import('node:http');
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((busy.address() as { port: number }).port);
      const bin = run(['dist/crm-fake.js', '--port', port]);

      expect(await bin.exit).toBe(1);
      expect(bin.output().stderr).toMatch(
        new RegExp(`^crm-fake: cannot serve on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*\\n$`),
      );
    } finally {
      busy.close();
    }
  });
});
