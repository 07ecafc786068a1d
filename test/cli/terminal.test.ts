import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { envFor, testIo } from '../support/run-crm';

/** stdout and stderr on one screen: what a person sees, in the order it was written. */
function screen(isTTY: { stdout: boolean; stderr: boolean }) {
  let text = '';
  const stream = (tty: boolean) => {
    const s = Object.assign(new PassThrough(), { isTTY: tty });
    s.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    return s;
  };
  return { stdout: stream(isTTY.stdout), stderr: stream(isTTY.stderr), text: () => text };
}

async function run(args: string[], isTTY: { stdout: boolean; stderr: boolean }) {
  const srv = await startedServer({ seed: generateFakeData({ accounts: 1, contacts: 30 }) });
  const env = envFor({ ...srv.fake.credentials, baseUrl: srv.url });
  const shown = screen(isTTY);
  const out: string[] = [];
  shown.stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  const code = await main(args, testIo({ stdout: shown.stdout, stderr: shown.stderr, env }));
  return { code, screen: shown.text(), stdout: out.join('') };
}

describe('crm --all on a terminal', () => {
  it('starts no record on the progress line when stdout is the same terminal', async () => {
    const { code, screen } = await run(['contacts', 'list', '--all', '--limit', '10'], { stdout: true, stderr: true });
    expect(code).toBe(0);
    // Every record line starts at the start of a line: after a newline, or after the progress
    // line was erased (\r ESC[K), never right after the progress text.
    const records = [...screen.matchAll(/\{"/g)].map((match) => match.index);
    expect(records).toHaveLength(30);
    for (const at of records) {
      const before = screen.slice(0, at);
      expect(before === '' || before.endsWith('\n') || before.endsWith('\r\x1b[K')).toBe(true);
    }
  });

  it('writes no escape sequence and no progress to stdout', async () => {
    const { stdout } = await run(['contacts', 'list', '--all', '--limit', '10'], { stdout: false, stderr: true });
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(30);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
    expect(stdout).not.toMatch(/[\u001b\r]|records\/s/);
  });
});
