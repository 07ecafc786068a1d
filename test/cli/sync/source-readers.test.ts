import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { SourceType } from '../../../src/cli/sync/columns';
import { csvRows } from '../../../src/cli/sync/csv-source';
import { ndjsonRecords } from '../../../src/cli/sync/ndjson-source';
import { SourceError } from '../../../src/cli/sync/source-error';
import { countRecords, openSources, recordsOf, rowsOf } from '../../../src/cli/sync/sources';

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

/** The bytes in chunks of 7 (a big text in 64 KiB), so that fields, quotes and line ends are cut across chunks. */
const chunked = (text: string | Buffer) => {
  const bytes = Buffer.from(text);
  const size = bytes.length > 1024 * 1024 ? 64 * 1024 : 7;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
};

const csv = async (text: string | Buffer, type: SourceType = 'contacts') =>
  (
    await collect(
      csvRows(chunked(text), {
        type,
        file: 'people.csv',
        text: { encoding: 'utf-8', bom: false, delimiter: ',', lineEnd: '\n' },
        map: undefined,
      }),
    )
  ).map((row) => row.record);

const refusal = async (promise: Promise<unknown>): Promise<SourceError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
};

describe('CSV sources', () => {
  it('reads quoted fields holding commas, doubled quotes and line breaks', async () => {
    const records = await csv('key,firstName,position\r\nP-1,"Smith, Jo","Head of ""R&D""\r\nand Sales"\r\n');
    expect(records).toEqual([{ key: 'P-1', data: { firstName: 'Smith, Jo', position: 'Head of "R&D"\r\nand Sales' } }]);
  });

  it('takes a UTF-8 byte order mark before the header and CRLF line ends', async () => {
    const records = await csv(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('key,email\r\nP-1,a@x.example\r\n')]),
    );
    expect(records).toEqual([{ key: 'P-1', data: { email: 'a@x.example' } }]);
  });

  it('leaves an empty cell out of the record, as an absent field', async () => {
    const records = await csv('key,accountKey,email,firstName\nP-1,,a@x.example,\n');
    expect(records).toEqual([{ key: 'P-1', data: { email: 'a@x.example' } }]);
    expect(records[0]).not.toHaveProperty('accountKey');
  });

  it('puts the key and reference columns beside data, and the fields in data', async () => {
    const records = await csv('key,accountKey,contactKey,name,amount\nD-1,C-1,P-1,Deal,1200.5\n', 'opportunities');
    expect(records).toEqual([
      { key: 'D-1', accountKey: 'C-1', contactKey: 'P-1', data: { name: 'Deal', amount: 1200.5 } },
    ]);
  });

  it("converts cells by the field's schema: numbers, true/false booleans, date-times as given", async () => {
    const contacts = await csv('key,isPrimary,phone\nP-1,true,0123\nP-2,FALSE,+33 1\nP-3,yes,1\n');
    expect(contacts.map((r) => r.data)).toEqual([
      { isPrimary: true, phone: '0123' },
      { isPrimary: false, phone: '+33 1' },
      // Not a boolean: left as text, for the engine's schema to refuse (a failed record).
      { isPrimary: 'yes', phone: '1' },
    ]);
    const deals = await csv(
      'key,accountKey,name,amount,probability,closeDate\nD-1,C-1,A,-5,0.25,2027-01-31T00:00:00Z\nD-2,C-1,B,12345678901234567890,1e2,\nD-3,C-1,C,12k,,\n',
      'opportunities',
    );
    expect(deals.map((r) => r.data)).toEqual([
      { name: 'A', amount: -5, probability: 0.25, closeDate: '2027-01-31T00:00:00Z' },
      // Past 2^53 it would be rounded to another number: kept as text, refused by the schema.
      { name: 'B', amount: '12345678901234567890', probability: 100 },
      { name: 'C', amount: '12k' },
    ]);
  });

  it('refuses a column that is no field of the type, naming the nearest, on line 1 at its column', async () => {
    const error = await refusal(csv('key,emial,firstName\nP-1,a@x.example,Jo\n'));
    expect(error.message).toBe('people.csv:1:2: "emial" is not a column of contacts; did you mean "email"?');
    expect([error.line, error.column]).toEqual([1, 2]);
  });

  it('refuses a reference column of another type, a column given twice, and a header without key', async () => {
    expect((await refusal(csv('key,opportunityKey\nP-1,D-1\n'))).message).toMatch(
      /^people\.csv:1:2: "opportunityKey" is not a column of contacts/,
    );
    expect((await refusal(csv('key,email,email\nP-1,a,b\n'))).message).toBe(
      'people.csv:1:3: the column "email" is given twice',
    );
    expect((await refusal(csv('email\na@x.example\n'))).message).toBe('people.csv:1: the header has no "key" column');
  });

  it('refuses an empty file, which with --removed deactivate would deactivate every record', async () => {
    expect((await refusal(csv(''))).message).toBe('people.csv: the file is empty: a CSV file starts with its header');
    expect(await csv('key,email\r\n')).toEqual([]);
  });

  it('cuts a long wrong column name at 80 characters', async () => {
    const name = `x${'y'.repeat(500)}`;
    const error = await refusal(csv(`key,${name}\nP-1,a\n`));
    expect(error.message).toContain(`"${name.slice(0, 80)}…"`);
    expect(error.message).not.toContain(name.slice(0, 81));
  });

  it('reads a 10 MiB cell whole', { timeout: 60_000 }, async () => {
    const big = 'z'.repeat(10 * 1024 * 1024);
    const records = await csv(`key,position\nP-1,"${big}"\nP-2,short\n`);
    expect((records[0] as { data: { position: string } }).data.position.length).toBe(big.length);
    expect(records[1]).toEqual({ key: 'P-2', data: { position: 'short' } });
  });

  it('refuses a row with more fields than the header by its line, without its content', async () => {
    const error = await refusal(csv('key,email\nP-1,a@x.example\nP-2,secret-value,extra\n'));
    expect(error.message).toMatch(
      /^people\.csv:3(:\d+)?: not valid CSV: this row has not as many fields as the header$/,
    );
    expect(error.message).not.toContain('secret-value');
  });

  it('refuses a quote that is never closed, without repeating the 10 MiB that follows it', {
    timeout: 60_000,
  }, async () => {
    const error = await refusal(csv(`key,position\nP-1,"${'q'.repeat(10 * 1024 * 1024)}\n`));
    expect(error.message).toMatch(
      /^people\.csv:\d+(:\d+)?: not valid CSV: a quoted field is not closed before the end of the file$/,
    );
    expect(error.message.length).toBeLessThan(200);
  });

  it('refuses a quote inside an unquoted field, without the field', async () => {
    const error = await refusal(csv('key,position\nP-1,ab"cd-private\n'));
    expect(error.message).toMatch(/^people\.csv:2(:\d+)?: not valid CSV: /);
    expect(error.message).not.toContain('private');
  });
});

const ndjson = (text: string) => collect(ndjsonRecords(chunked(text), 'people.ndjson'));

describe('NDJSON sources', () => {
  it("reads each line as the engine's record, as it is, across chunks, with a BOM, CRLF and blank lines", async () => {
    const records = await ndjson(
      '\uFEFF{"key":"P-1","accountKey":"C-1","data":{"email":"a@x.example","isPrimary":true}}\r\n\r\n  \n{"key":"P-2","data":{}}',
    );
    expect(records).toEqual([
      { key: 'P-1', accountKey: 'C-1', data: { email: 'a@x.example', isPrimary: true } },
      { key: 'P-2', data: {} },
    ]);
  });

  it('refuses a line that is not JSON by its line and column, never its text', async () => {
    const error = await refusal(ndjson('{"key":"P-1","data":{}}\n{"key":"P-2","data":{"email":sk_live_secret}}\n'));
    expect(error.message).toBe('people.ndjson:2:30: not valid JSON');
    expect([error.line, error.column]).toEqual([2, 30]);
  });

  it('refuses a line that is JSON but not an object', async () => {
    const error = await refusal(ndjson('{"key":"P-1","data":{}}\n["P-2"]\n'));
    expect(error.message).toBe('people.ndjson:2:1: not a JSON object ({ "key": ..., "data": { ... } })');
  });
});

describe('source files', () => {
  const dir = () => mkdtemp(join(tmpdir(), 'crm-sources-'));

  it('reads a .csv as CSV, a .ndjson as NDJSON and standard input by its first character, and counts records', async () => {
    const at = await dir();
    await writeFile(join(at, 'customers.csv'), 'key,name\nC-1,Acme\nC-2,"Beta, Inc"\n');
    await writeFile(join(at, 'people.ndjson'), '{"key":"P-1","data":{"email":"a@x.example"}}\n');
    const { sources, close } = await openSources(
      { accounts: join(at, 'customers.csv'), contacts: join(at, 'people.ndjson'), opportunities: '-' },
      Readable.from([Buffer.from('key,accountKey,name\nD-1,C-1,Deal\n')]),
      ['accounts', 'contacts', 'opportunities', 'activities'],
    );
    expect(sources.map((s) => [s.type, s.format])).toEqual([
      ['accounts', 'csv'],
      ['contacts', 'ndjson'],
      ['opportunities', 'csv'],
    ]);
    expect(await Promise.all(sources.map(countRecords))).toEqual([2, 1, 1]);
    // Read again from the start, as a run reads after the check.
    expect(await collect(recordsOf(sources[2] as never))).toEqual([
      { key: 'D-1', accountKey: 'C-1', data: { name: 'Deal' } },
    ]);
    await close();
  });

  it('refuses a file that cannot be read, by its name and the reason', async () => {
    const at = await dir();
    const error = await refusal(openSources({ accounts: join(at, 'missing.txt') }, Readable.from([]), ['accounts']));
    expect(error.message).toBe(`${join(at, 'missing.txt')}: cannot read the file (ENOENT)`);
    const { sources } = await openSources({ accounts: at.concat('/') }, Readable.from([]), ['accounts']).catch(() => ({
      sources: [],
    }));
    expect(sources).toEqual([]);
    const csvMissing = {
      type: 'accounts',
      file: 'gone.csv',
      path: join(at, 'gone.csv'),
      format: 'csv',
      text: { encoding: 'utf-8', bom: false, delimiter: ',', lineEnd: '\n' },
      map: undefined,
    } as const;
    expect((await refusal(countRecords(csvMissing))).message).toBe('gone.csv: cannot read the file (ENOENT)');
    const ndjsonDir = {
      type: 'accounts',
      file: 'dir.ndjson',
      path: at,
      format: 'ndjson',
      text: undefined,
      map: undefined,
    } as const;
    expect((await refusal(countRecords(ndjsonDir))).message).toBe('dir.ndjson: cannot read the file (EISDIR)');
  });
});

describe('the rows of a source, for a writer of failed rows', () => {
  it("gives each CSV row's text as read, its line, and the file's encoding, byte order mark and separator", async () => {
    const at = await mkdtemp(join(tmpdir(), 'crm-rows-'));
    const path = join(at, 'people.csv');
    await writeFile(
      path,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('key;name\r\nC-1;"Acme;\r\nInc"\r\n\r\nC-2;Zoë')]),
    );
    const { sources } = await openSources({ accounts: path }, Readable.from([]), ['accounts']);
    const [source] = sources;
    expect(source?.text).toEqual({ encoding: 'utf-8', bom: true, delimiter: ';', lineEnd: '\r\n' });
    const rows = await collect(rowsOf(source as NonNullable<typeof source>));
    expect(rows.map(({ raw, line, record }) => ({ raw, line, key: record.key }))).toEqual([
      { raw: 'C-1;"Acme;\r\nInc"', line: 2, key: 'C-1' },
      { raw: 'C-2;Zoë', line: 5, key: 'C-2' },
    ]);
  });
});
