import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/server';
import { envFor } from './run-crm';

/** What a test of `crm sync` runs against: set afresh before each test of the file. */
export interface SyncCliFixture {
  /** A temporary directory, removed after the test. */
  dir: string;
  /** A fake CRM over HTTP, closed after the test. */
  server: FakeCrmServer;
  /** The variables that point `crm` at it. */
  env: Record<string, string>;
  /** Writes `text` to `name` in `dir`, and gives its path. */
  file(name: string, text: string): string;
}

/** Registers, for the calling test file, a fresh directory and fake CRM server per test. */
export function syncCliFixture(prefix: string): SyncCliFixture {
  const fixture = {
    file(name: string, text: string): string {
      const path = join(fixture.dir, name);
      writeFileSync(path, text);
      return path;
    },
  } as SyncCliFixture;
  beforeEach(async () => {
    fixture.dir = mkdtempSync(join(tmpdir(), prefix));
    fixture.server = await startFakeCrmServer();
    fixture.env = envFor(fixture.server.fake.credentials);
  });
  afterEach(async () => {
    // A test may leave its directory read-only.
    chmodSync(fixture.dir, 0o700);
    await fixture.server.close();
    rmSync(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
}
