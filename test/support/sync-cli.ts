import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/server';
import { envFor } from './run-crm';

/** What each test of `crm sync` gets: a directory of its own, a fake CRM, and the variables naming it. */
export interface SyncCliFixture {
  readonly dir: string;
  readonly server: FakeCrmServer;
  readonly env: Record<string, string>;
  /** Writes `text` to `name` in the test's directory, and gives its path. */
  readonly file: (name: string, text: string) => string;
}

/** Makes a {@link SyncCliFixture} before each test of the file and removes it after (even a directory made read-only). */
export function syncCliFixture(prefix: string): SyncCliFixture {
  const state = { dir: '', server: undefined as FakeCrmServer | undefined, env: {} as Record<string, string> };
  beforeEach(async () => {
    state.dir = mkdtempSync(join(tmpdir(), prefix));
    state.server = await startFakeCrmServer();
    state.env = envFor(state.server.fake.credentials);
  });
  afterEach(async () => {
    chmodSync(state.dir, 0o700);
    await state.server?.close();
    rmSync(state.dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return state.dir;
    },
    get server() {
      if (!state.server) throw new Error('syncCliFixture(): used outside a test');
      return state.server;
    },
    get env() {
      return state.env;
    },
    file: (name, text) => {
      const path = join(state.dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}
