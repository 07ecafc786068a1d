import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/core/errors';
import { SOURCE_FAULT } from '../../src/sync/source-fault';
import type { SyncAccountRecord } from '../../src/sync/types';
import { syncHarness } from '../support/sync';

describe('a record its source could not read (SOURCE_FAULT)', () => {
  test("is invalid with the source's field and message, sends nothing, and a repeat of its key is still a repeat", async () => {
    const { sync, fake } = await syncHarness();
    const unread = {
      key: 'A1',
      data: { name: 'Acme' },
      [SOURCE_FAULT]: {
        field: 'data.status',
        message: '"aktivx" is not in the values map ("aktiv") (column "Status")',
      },
    } as SyncAccountRecord;
    const report = await sync.run({
      accounts: [unread, { key: 'A1', data: { name: 'Again' } }, { key: 'A2', data: { name: 'Beta' } }],
    });
    expect(report.created).toBe(1);
    expect(report.failed.map((f) => f.key)).toEqual(['A1', 'A1']);
    const error = report.failed[0]?.error as CrmValidationError;
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.message).toBe(
      'Invalid record: data.status: "aktivx" is not in the values map ("aktiv") (column "Status")',
    );
    expect(fake.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { name: string }).name)).toEqual([
      'Beta',
    ]);
  });
});
