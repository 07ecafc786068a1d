import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-formats-');

const bytes = (name: string, content: Uint8Array) => {
  const path = join(f.dir, name);
  writeFileSync(path, content);
  return path;
};

/** `crm sync apply` of one accounts file, with `more` flags. */
const apply = (file: string, more: readonly string[] = []) =>
  runCrm(['sync', 'apply', '--journal', join(f.dir, 'j.db'), '--accounts', file, ...more], f.env);

const stored = () =>
  [...f.server.fake.store.accounts.values()]
    .map((a) => ({ name: a.name, city: a.city, annualRevenue: a.annualRevenue }))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));

const message = (run: { stderr: string }) => JSON.parse(run.stderr).message as string;

describe('crm sync reads the separator a file uses', () => {
  it('detects ";" and a tab from the header line, and takes --delimiter', async () => {
    const semicolon = f.file('semi.csv', 'key;name;city\nC-1;"Acme; Inc";Köln\n');
    expect((await apply(semicolon)).code).toBe(0);
    const tab = f.file('tab.csv', 'key\tname\tcity\nC-2\tBeta, Ltd\tBonn\n');
    expect((await apply(tab)).code).toBe(0);
    const forced = f.file('forced.csv', 'key;name\nC-3;Gamma\n');
    expect((await apply(forced, ['--delimiter', ';'])).code).toBe(0);
    expect(stored()).toEqual([
      { name: 'Acme; Inc', city: 'Köln', annualRevenue: undefined },
      { name: 'Beta, Ltd', city: 'Bonn', annualRevenue: undefined },
      { name: 'Gamma', city: undefined, annualRevenue: undefined },
    ]);
  });

  it("says --delimiter ';' when a header read with ',' is one column holding ';'", async () => {
    const file = f.file('semi.csv', 'key;name\nC-1;Acme\n');
    const run = await apply(file, ['--delimiter', ',']);
    expect(run.code).toBe(2);
    expect(message(run)).toBe(
      `${file}:1:1: "key;name" is not a column of accounts; the header is one column holding ";": give --delimiter ';'`,
    );
  });

  it('refuses a --delimiter or --encoding it does not know', async () => {
    const file = f.file('a.csv', 'key,name\nC-1,Acme\n');
    expect(message(await apply(file, ['--delimiter', '|']))).toBe('--delimiter must be "," or ";" or "tab", not "|"');
    expect(message(await apply(file, ['--encoding', 'ebcdic']))).toBe(
      '--encoding must be "utf-8" or "latin1" or "windows-1252" or "utf-16le", not "ebcdic"',
    );
  });
});

describe('crm sync reads the encoding a file is in', () => {
  it('reads windows-1252 and latin1 when told, and UTF-16LE and UTF-8 by their byte order mark', async () => {
    // 0x80 is € in windows-1252; the umlauts are the same bytes in both code pages.
    const cp = bytes(
      'cp.csv',
      Buffer.concat([
        Buffer.from('key,name,city\nC-1,M', 'latin1'),
        Buffer.from([0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x20, 0x80]),
        Buffer.from(',K\xf6ln\n', 'latin1'),
      ]),
    );
    expect((await apply(cp, ['--encoding', 'windows-1252'])).code).toBe(0);
    const latin = bytes('latin.csv', Buffer.from('key,name,city\nC-2,Gr\xfc\xdfe,Z\xfcrich\n', 'latin1'));
    expect((await apply(latin, ['--encoding', 'latin1'])).code).toBe(0);
    const utf16 = bytes(
      'utf16.csv',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('key,name,city\r\nC-3,Ærø,Øst\r\n', 'utf16le')]),
    );
    // The byte order mark decides over --encoding.
    expect((await apply(utf16, ['--encoding', 'windows-1252'])).code).toBe(0);
    const utf8 = bytes('utf8.csv', Buffer.from('\uFEFFkey,name,city\nC-4,Zoë,Łódź\n', 'utf8'));
    expect((await apply(utf8)).code).toBe(0);
    expect(stored()).toEqual([
      { name: 'Ærø', city: 'Øst', annualRevenue: undefined },
      { name: 'Grüße', city: 'Zürich', annualRevenue: undefined },
      { name: 'Müller €', city: 'Köln', annualRevenue: undefined },
      { name: 'Zoë', city: 'Łódź', annualRevenue: undefined },
    ]);
  });

  it('reads a file whose head is not UTF-8 as windows-1252, and says so', async () => {
    const cp = bytes('cp.csv', Buffer.from('key,name\nC-1,M\xfcller\n', 'latin1'));
    const run = await apply(cp);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`crm: ${cp} is not UTF-8: read as windows-1252 (give --encoding to say which)`);
    expect(stored()).toMatchObject([{ name: 'Müller' }]);
  });

  it('refuses a malformed UTF-8 byte past the head, streaming, rather than send U+FFFD', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `C-${i},Account ${i} with a long enough name\n`).join('');
    const file = bytes(
      'late.csv',
      Buffer.concat([Buffer.from(`key,name\n${rows}`), Buffer.from('C-x,M\xfcller\n', 'latin1')]),
    );
    const run = await apply(file);
    expect(run.code).toBe(2);
    expect(message(run)).toBe(`${file}: not valid UTF-8: give --encoding windows-1252 (or latin1)`);
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
  });
});

describe('crm sync refuses a file that is not text as such, not as a bad row', () => {
  it('names gzip, an .xlsx (zip) and a file of NUL bytes', async () => {
    const gz = bytes('accounts.csv', gzipSync('key,name\nC-1,Acme\n'));
    expect(message(await apply(gz))).toBe(`${gz}: this is not a text file (gzip)`);
    const xlsx = bytes('accounts.xlsx.csv', Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]));
    expect(message(await apply(xlsx))).toBe(
      `${xlsx}: this is not a text file (zip: an .xlsx or .zip file; export CSV)`,
    );
    const nul = bytes('nul.csv', Buffer.from('key,name\nC-1,A\u0000cme\n'));
    expect(message(await apply(nul))).toBe(`${nul}: this is not a text file (binary: it holds NUL bytes)`);
    const gzNdjson = bytes('accounts.ndjson', gzipSync('{"key":"C-1","data":{"name":"Acme"}}\n'));
    expect(message(await apply(gzNdjson))).toBe(`${gzNdjson}: this is not a text file (gzip)`);
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
  });
});
