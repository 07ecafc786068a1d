import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { MAX_SYNC_KEY_BYTES } from '../../src/sync/index';
import { syncHarness } from '../support/sync';

const LONGEST = '\u{1F600}'.repeat(MAX_SYNC_KEY_BYTES / 4); // 4 bytes of UTF-8 each
const TOO_LONG = `${'\u20AC'.repeat(341)}ab`; // 341 × 3 + 2 = 1,025 bytes, 343 UTF-16 units

describe('keys any journal can hold', () => {
  test('a key of lone surrogates or over 1,024 bytes of UTF-8 is a failed record; the rest of the run goes on', async () => {
    const { sync, fake } = await syncHarness();
    const source = {
      accounts: [
        { key: 's\uD800', data: { name: 'Cut one' } },
        { key: 's\uDC01', data: { name: 'Cut two' } },
        { key: TOO_LONG, data: { name: 'Too long' } },
        { key: LONGEST, data: { name: 'Longest' } },
        { key: 'plain', data: { name: 'Plain' } },
      ],
    };
    const report = await sync.run(source);

    expect(report.created).toBe(2);
    expect(report.failed.map((f) => [f.key, f.error.message])).toEqual([
      ['s\uD800', expect.stringMatching(/^Invalid record.*key.*well-formed text.*lone surrogate/s)],
      ['s\uDC01', expect.stringMatching(/well-formed text/)],
      [TOO_LONG, expect.stringMatching(/at most 1024 bytes of UTF-8 \(this one has 1025\)/)],
    ]);
    expect(report.failed.every((f) => f.error instanceof CrmValidationError)).toBe(true);
    expect(await sync.idOf('accounts', LONGEST)).toBeDefined();

    const again = await sync.run(source);
    expect(again).toMatchObject({ created: 0, unchanged: 2 });
    expect(fake.store.accounts.size).toBe(2);
  });

  test("a parent's key field follows the same rules, and a plan calls such records invalid", async () => {
    const { sync, sent } = await syncHarness();
    const source = {
      accounts: [{ key: 'A1', data: { name: 'Account' } }],
      contacts: [
        { key: 'C1', accountKey: 'A\uD800', data: { firstName: 'Cut' } },
        { key: 'C2', accountKey: TOO_LONG, data: { firstName: 'Long' } },
        { key: 'C3', accountKey: 'A1', data: { firstName: 'Fine' } },
      ],
    };
    const plan = await sync.plan(source);
    expect(sent()).toEqual([]);
    expect(plan.entries.filter((e) => e.action === 'invalid')).toEqual([
      { type: 'contacts', key: 'C1', action: 'invalid', reason: expect.stringMatching(/accountKey.*well-formed/s) },
      { type: 'contacts', key: 'C2', action: 'invalid', reason: expect.stringMatching(/accountKey.*1024 bytes/s) },
    ]);

    const report = await sync.run(source);
    expect(report.created).toBe(2);
    expect(report.failed.map((f) => [f.key, (f.error as CrmValidationError).issues[0]?.field])).toEqual([
      ['C1', 'accountKey'],
      ['C2', 'accountKey'],
    ]);
  });

  test('sync.resolve() and sync.idOf() refuse such a key before the journal is touched', async () => {
    const { sync } = await syncHarness();
    await expect(sync.resolve('accounts', 's\uD800', null)).rejects.toThrow(/well-formed/);
    await expect(sync.resolve('accounts', TOO_LONG, 'acc_1')).rejects.toBeInstanceOf(CrmValidationError);
    await expect(sync.idOf('accounts', TOO_LONG)).rejects.toThrow(/1024 bytes/);
  });
});
