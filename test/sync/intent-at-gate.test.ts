import { expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { throughMsw } from '../support/fake-harness';

/* A create's intent is written at its request's send gate, once it has its turn (issue 46, 1). */

const accounts = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `A${i}`, data: { name: `A${i}` } }));

test('no create waiting for its turn has its intent in the journal: each one there has reached the server', async () => {
  const { fake, baseUrl } = await throughMsw({ latencyMs: 2 });
  // One slot: the other 7 creates of the run's concurrency wait for it, and write nothing meanwhile.
  const crm = new CrmClient({ ...fake.credentials, baseUrl, maxConcurrency: 1 });
  const journal = memoryJournal();
  const received = new Set<string>();
  const ahead: string[] = [];
  const handle = fake.handle.bind(fake);
  fake.handle = async (request: Request) => {
    if (request.method === 'POST') {
      const { name } = (await request.clone().json()) as { name: string };
      received.add(name);
      for (const entry of await journal.pending(fake.tenantId)) if (!received.has(entry.key)) ahead.push(entry.key);
    }
    return handle(request);
  };
  const report = await new CrmSync(crm, { journal, settleMs: 0 }).run({ accounts: accounts(24) }, { concurrency: 8 });
  expect(report.created).toBe(24);
  expect(ahead).toEqual([]);
});

test('a create whose intent cannot be written is never sent, and the run rejects with the journal error', async () => {
  const { fake, baseUrl } = await throughMsw();
  const crm = new CrmClient({ ...fake.credentials, baseUrl });
  const base = memoryJournal();
  const failing: SyncJournal = Object.assign(Object.create(base) as SyncJournal, {
    write: async () => {
      throw new Error('disk full');
    },
  });
  // Every other method is the journal's own, bound to it (its private state): the run's history too.
  const names = new Set([...Object.keys(base), ...Object.getOwnPropertyNames(Object.getPrototypeOf(base))]);
  for (const name of names) {
    const method = (base as unknown as Record<string, unknown>)[name];
    if (name !== 'write' && name !== 'constructor' && typeof method === 'function') {
      Object.assign(failing, { [name]: method.bind(base) });
    }
  }
  const run = new CrmSync(crm, { journal: failing, settleMs: 0 }).run({ accounts: accounts(5) });
  await expect(run).rejects.toThrow('disk full');
  expect(fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
});
