import { describe, expect, test } from 'vitest';
import { exportContactsAsNdjson } from '../examples/export-contacts-ndjson';
import { capture, makeClient, ok } from './support/capture';

describe('examples/export-contacts-ndjson', () => {
  test('writes every contact of every page as one JSON line, asking 200 at a time', async () => {
    const seen = capture('get', '/integrations/v1/contacts', (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
      const data = page === 1 ? [{ id: 'c1', email: 'a@x.io' }, { id: 'c2' }] : [{ id: 'c3' }];
      return ok(data, { pagination: { page, limit: 200, total: 3, pages: 2 } });
    });
    const lines: string[] = [];

    const count = await exportContactsAsNdjson(makeClient(), (line) => lines.push(line));

    expect(count).toBe(3);
    expect(lines.map((line) => JSON.parse(line))).toEqual([{ id: 'c1', email: 'a@x.io' }, { id: 'c2' }, { id: 'c3' }]);
    expect(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n'))).toBe(true);
    expect(seen.map((r) => [r.url.searchParams.get('limit'), r.url.searchParams.get('page')])).toEqual([
      ['200', null],
      ['200', '2'],
    ]);
  });
});
