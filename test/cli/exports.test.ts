import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { CRM_BIN, envFor, runCrm, runInProcess, terminal, testIo } from '../support/run-crm';

async function fakeCrm(contacts: number) {
  const srv = await startedServer({ seed: generateFakeData({ accounts: 2, contacts }) });
  return { fake: srv.fake, env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }) };
}

const lines = (text: string): unknown[] =>
  text
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe('crm <namespace> list --all', () => {
  it('prints every record as NDJSON over several pages, fetching each page once with --prefetch', async () => {
    const { fake, env } = await fakeCrm(30);
    const run = await runCrm(['contacts', 'list', '--all', '--limit', '7', '--prefetch', '2'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(lines(run.stdout).map((record) => (record as { id: string }).id)).toEqual([...fake.store.contacts.keys()]);
    // The first page is asked for without a page number: the API's default.
    expect(fake.requests.map((request) => request.query.page ?? 'first').sort()).toEqual(['2', '3', '4', '5', 'first']);
    expect(new Set(fake.requests.map((request) => request.query.limit))).toEqual(new Set(['7']));
  });

  it('stops after --max records', async () => {
    const { fake, env } = await fakeCrm(30);
    const run = await runCrm(['contacts', 'list', '--all', '--limit', '7', '--max', '10'], env);
    expect(run.code).toBe(0);
    expect(lines(run.stdout).map((record) => (record as { id: string }).id)).toEqual(
      [...fake.store.contacts.keys()].slice(0, 10),
    );
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses a --prefetch the SDK refuses, before sending anything', async () => {
    const { fake, env } = await fakeCrm(3);
    const run = await runCrm(['contacts', 'list', '--all', '--prefetch', '99'], env);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toEqual(expect.objectContaining({ name: 'CrmValidationError' }));
    expect(fake.requests).toEqual([]);
  });

  it('ends quietly with 0 when the reader closes the pipe early', async () => {
    const { env } = await fakeCrm(600);
    const child = spawn(process.execPath, [CRM_BIN, 'contacts', 'list', '--all', '--limit', '50'], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});

describe('crm on a terminal', () => {
  it('draws one updating progress line on stderr with --all, and nothing when stderr is not a terminal', async () => {
    const { env } = await fakeCrm(30);
    const watched = await runInProcess(['contacts', 'list', '--all', '--limit', '10'], env, {
      stdout: false,
      stderr: true,
    });
    expect(watched.code).toBe(0);
    expect(lines(watched.stdout)).toHaveLength(30);
    // Each drawing returns to the line's start and erases it (ESC [K).
    expect(watched.stderr.replaceAll('\x1b[K', '<erase>')).toMatch(
      /\r<erase>30 records, 3 pages, [\d,]+ records\/s\n$/,
    );
    expect(watched.stderr.split('\n')).toHaveLength(2);

    const piped = await runInProcess(['contacts', 'list', '--all', '--limit', '10'], env, {
      stdout: false,
      stderr: false,
    });
    expect(piped.stderr).toBe('');
  });

  it('indents JSON for a person, and tells a failure in one line unless --json-errors', async () => {
    const { fake, env } = await fakeCrm(3);
    const [contact] = fake.store.contacts.values();
    const shown = await runInProcess(['contacts', 'list', '--limit', '1'], env, { stdout: true, stderr: true });
    expect(shown.stdout).toBe(`${JSON.stringify(JSON.parse(shown.stdout), null, 2)}\n`);
    expect(JSON.parse(shown.stdout).data[0].id).toBe(contact?.id);

    const failed = await runInProcess(['opportunities', 'get', 'opp_missing'], env, { stdout: true, stderr: true });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toMatch(/^crm: 404 from GET \/integrations\/v1\/opportunities\/opp_missing: .+\n$/);

    const asJson = await runInProcess(['opportunities', 'get', 'opp_missing', '--json-errors'], env, {
      stdout: true,
      stderr: true,
    });
    expect(JSON.parse(asJson.stderr)).toEqual(expect.objectContaining({ name: 'CrmNotFoundError', status: 404 }));
  });

  it('exits 1 on a failure that is not the API nor the input', async () => {
    const { env } = await fakeCrm(3);
    const broken = Object.assign(new PassThrough(), { isTTY: false });
    broken.write = () => {
      throw new Error('disk full');
    };
    const stderr = terminal(false);
    const code = await main(['contacts', 'list'], testIo({ stdout: broken, stderr: stderr.stream, env }));
    expect(code).toBe(1);
    expect(JSON.parse(stderr.text())).toEqual({ name: 'Error', message: 'disk full' });
  });
});
