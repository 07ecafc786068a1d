import { describe, expect, it } from 'vitest';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-map-');

const ACCOUNTS = 'Kundennr;Firma;Umsatz;Status\nK-1;Müller GmbH;1.200.000,50;aktiv\n';

/** `crm sync plan` of `accounts` (CSV text) with `mapping` (an object, or the file's text). */
async function plan(mapping: unknown, accounts = ACCOUNTS, more: readonly string[] = []) {
  const map = f.file('map.json', typeof mapping === 'string' ? mapping : JSON.stringify(mapping));
  const file = f.file('Kunden.csv', accounts);
  const run = await runCrm(
    ['sync', 'plan', '--journal', `${f.dir}/j.db`, '--map', map, '--accounts', file, '--json', ...more],
    f.env,
  );
  const sent = f.server.fake.requests.filter((r) => r.method !== 'GET').length;
  const lines = run.stdout.trim()
    ? run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
    : [];
  const message = run.code === 2 ? (JSON.parse(run.stderr).message as string) : undefined;
  return { code: run.code, message, lines, sent, stderr: run.stderr, map, file };
}

const message = (run: { stderr: string }) => JSON.parse(run.stderr).message as string;

const accounts = (fields: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
  accounts: { key: 'Kundennr', fields: { name: 'Firma', ...fields }, ...more },
});

describe('crm sync refuses a hostile or mistaken mapping file at start (exit 2, nothing sent)', () => {
  it('refuses a key named __proto__ anywhere, rather than take it for a prototype', async () => {
    for (const text of [
      '{"accounts":{"key":"Kundennr","fields":{"name":"Firma","__proto__":{"column":"x"}}}}',
      '{"accounts":{"key":"Kundennr","fields":{"status":{"column":"Status","values":{"__proto__":"active"}}}}}',
      '{"__proto__":{"polluted":true},"accounts":{"key":"Kundennr","fields":{"name":"Firma"}}}',
    ]) {
      const run = await plan(text);
      expect(run.code).toBe(2);
      expect(run.message).toMatch(/__proto__: a key named "__proto__" is refused$/);
      expect(run.sent).toBe(0);
    }
  });

  it('refuses unknown keys, a field the type has not, and a transform that does not fit the field', async () => {
    const cases: [unknown, string][] = [
      [{ accounts: { key: 'Kundennr', colums: {}, fields: {} } }, 'accounts: unknown key: "colums"'],
      [{ leads: {} }, 'the mapping: unknown key: "leads"'],
      [accounts({ umsatz: 'Umsatz' }), 'accounts.fields.umsatz: accounts have no field "umsatz"'],
      [{ accounts: { key: 'Kundennr', accountKey: 'X', fields: {} } }, 'accounts: unknown key: "accountKey"'],
      [
        accounts({ name: { column: 'Firma', date: { format: 'dd.MM.yyyy', timeZone: 'Europe/Berlin' } } }),
        'accounts.fields.name: "date" reads a date-time, and name is not one',
      ],
      [
        accounts({ annualRevenue: { column: 'Umsatz', boolean: { true: ['J'], false: ['N'] } } }),
        'accounts.fields.annualRevenue: "boolean" reads a boolean, and annualRevenue is not one',
      ],
      [accounts({ annualRevenue: { column: 'Umsatz', value: 5 } }), 'give exactly one of "column" and "value"'],
      [accounts({ annualRevenue: {} }), 'give exactly one of "column" and "value"'],
      [
        accounts({ status: { column: 'Status', values: { aktiv: 'active' }, number: { decimal: ',' } } }),
        'at most one transform',
      ],
      [
        accounts({ status: { column: 'Status', values: { aktiv: 'aktive' } } }),
        'the values map gives "aktive", not one of active, inactive, prospect',
      ],
      [accounts({ industry: { value: 7 } }), 'accounts.fields.industry: the value 7 is not a industry'],
      [
        accounts({ annualRevenue: { column: 'Umsatz', number: { decimal: ',', thousands: ',' } } }),
        '"decimal" and "thousands" must differ',
      ],
    ];
    for (const [mapping, said] of cases) {
      const run = await plan(mapping);
      expect([run.code, run.message]).toEqual([2, expect.stringContaining(said)]);
    }
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
  });

  it('refuses a time zone that does not exist and a date format date-fns cannot read or that lacks a day', async () => {
    const dated = (format: string, timeZone: string) => ({
      opportunities: {
        key: 'Nr',
        accountKey: 'Kunde',
        fields: { name: 'Name', expectedCloseDate: { column: 'Datum', date: { format, timeZone } } },
      },
    });
    const cases: [unknown, string][] = [
      [dated('dd.MM.yyyy', 'Europe/Atlantis'), '"Europe/Atlantis" is not a time zone'],
      [dated('dd.MM.yyyy', ''), 'expectedCloseDate.date.timeZone'],
      [dated('dd.MM.yyyy gg', 'UTC'), 'unescaped latin alphabet character `g`'],
      [dated('MM.yyyy', 'UTC'), 'it needs a year (yyyy), a month (MM) and a day (dd)'],
    ];
    for (const [mapping, said] of cases) {
      const map = f.file('map.json', JSON.stringify(mapping));
      const file = f.file('deals.csv', 'Nr,Kunde,Name,Datum\nA-1,K-1,Deal,31.01.2027\n');
      const run = await runCrm(
        ['sync', 'plan', '--journal', `${f.dir}/j.db`, '--map', map, '--opportunities', file],
        f.env,
      );
      expect([run.code, JSON.parse(run.stderr).message]).toEqual([2, expect.stringContaining(said)]);
    }
  });

  it('refuses a mapped column the header lacks, naming the file, the column and the field', async () => {
    const run = await plan(
      accounts({ annualRevenue: { column: 'Umsatz EUR', number: { decimal: ',', thousands: '.' } } }),
    );
    expect(run.code).toBe(2);
    expect(run.message).toBe(
      `${run.file}:1: the column "Umsatz EUR" (accounts.fields.annualRevenue in ${run.map}) is not in the header`,
    );
  });

  it('refuses a mapping that gives no column for a required field', async () => {
    const run = await plan({ accounts: { key: 'Kundennr', fields: { type: 'Status' } } });
    expect(run.message).toBe(`${run.file}: ${run.map} maps no column to "name", which accounts need`);
  });

  it('refuses a file without a required column once, before anything is sent, without a mapping too', async () => {
    const file = f.file('accounts.csv', 'key,city\nC-1,Köln\nC-2,Bonn\n');
    const run = await runCrm(['sync', 'apply', '--journal', `${f.dir}/j.db`, '--accounts', file], f.env);
    expect([run.code, JSON.parse(run.stderr).message]).toEqual([
      2,
      `${file}:1: the header has no "name" column, which every account needs`,
    ]);
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    // An opportunity's accountId is given by its accountKey column: the file is read, and its one
    // record planned as invalid for what it names (no account C-1), which --allow-invalid lets exit 0.
    const deals = f.file('deals.csv', 'key,accountKey,name\nD-1,C-1,Deal\n');
    const plain = await runCrm(
      ['sync', 'plan', '--journal', `${f.dir}/j.db`, '--opportunities', deals, '--json', '--allow-invalid'],
      f.env,
    );
    expect(plain.code).toBe(0);
    const [entry, last] = plain.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entry).toMatchObject({
      key: 'D-1',
      action: 'invalid',
      reason: expect.stringMatching(/No account has key "C-1"/),
    });
    expect(last.counts).toMatchObject({ create: 0, invalid: 1 });
  });

  it('refuses a mapping file that is missing or not JSON, and a mapping for an NDJSON source', async () => {
    const file = f.file('Kunden.csv', ACCOUNTS);
    const missing = `${f.dir}/nowhere.json`;
    const gone = await runCrm(
      ['sync', 'plan', '--journal', `${f.dir}/j.db`, '--map', missing, '--accounts', file],
      f.env,
    );
    expect([gone.code, message(gone)]).toEqual([2, `--map ${missing}: cannot read the file (ENOENT)`]);
    const run = await plan('{"accounts": {"key": "Kundennr",');
    expect([run.code, run.message]).toEqual([2, `--map ${run.map}: not valid JSON`]);
    const ndjson = f.file('accounts.ndjson', '{"key":"C-1","data":{"name":"Acme"}}\n');
    const map = f.file('m.json', JSON.stringify(accounts({})));
    const mixed = await runCrm(
      ['sync', 'plan', '--journal', `${f.dir}/j.db`, '--map', map, '--accounts', ndjson],
      f.env,
    );
    expect([mixed.code, message(mixed)]).toEqual([2, `${ndjson}: --map maps CSV columns, and this is NDJSON`]);
  });

  it('takes a values map of 50,000 entries', async () => {
    const values = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`code-${i}`, 'prospect']));
    const run = await plan(accounts({ status: { column: 'Status', values: { ...values, aktiv: 'active' } } }));
    expect(run.code).toBe(0);
    expect(run.lines.at(-1).counts).toMatchObject({ create: 1, invalid: 0 });
  });
});

describe('a mapped cell that cannot be read makes its record invalid, naming the cell and its column', () => {
  it('names a value not in the map, a number like 1.2.3, a boolean not listed, an impossible date', async () => {
    const map = f.file(
      'map.json',
      JSON.stringify({
        accounts: {
          key: 'Nr',
          fields: {
            name: 'Firma',
            annualRevenue: { column: 'Umsatz', number: { decimal: ',', thousands: '.' } },
            status: { column: 'Status', values: { aktiv: 'active' } },
          },
        },
        contacts: {
          key: 'P',
          accountKey: 'Nr',
          fields: { isPrimary: { column: 'Haupt', boolean: { true: ['J'], false: ['N'] } } },
        },
        opportunities: {
          key: 'A',
          accountKey: 'Nr',
          fields: {
            name: 'Name',
            expectedCloseDate: { column: 'Datum', date: { format: 'yyyy-MM-dd HH:mm', timeZone: 'Europe/Berlin' } },
          },
        },
      }),
    );
    const accountsFile = f.file(
      'a.csv',
      'Nr;Firma;Umsatz;Status\nK-1;Eins;1.2.3;aktiv\nK-2;Zwei;1,5;toString\nK-3;Drei;1.000;aktiv\nK-4;;5;aktiv\n',
    );
    const contactsFile = f.file('c.csv', 'P;Nr;Haupt\nP-1;K-3;vielleicht\n');
    const dealsFile = f.file(
      'o.csv',
      'A;Nr;Name;Datum\nA-1;K-3;Sommer;2027-03-28 02:30\nA-2;K-3;Kurz;31.01.27\nA-3;K-3;Gut;2026-10-25 02:30\n',
    );
    const run = await runCrm(
      [
        'sync',
        'plan',
        '--journal',
        `${f.dir}/j.db`,
        '--map',
        map,
        '--accounts',
        accountsFile,
        '--contacts',
        contactsFile,
        '--opportunities',
        dealsFile,
        '--json',
      ],
      f.env,
    );
    // (Its exit code is issue 47's item 4: a plan with invalid records.)
    expect(run.stderr).toBe('');
    const entries = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const reason = (type: string, key: string) =>
      entries.find((e) => e.type === type && e.key === key && e.action === 'invalid')?.reason;
    expect(reason('accounts', 'K-1')).toBe(
      'Invalid record: data.annualRevenue: "1.2.3" is not a number with the decimal "," and the thousands "." (column "Umsatz")',
    );
    expect(reason('accounts', 'K-2')).toBe(
      'Invalid record: data.status: "toString" is not in the values map ("aktiv") (column "Status")',
    );
    // An empty cell of a required field is an absent field, which the schema refuses.
    expect(reason('accounts', 'K-4')).toMatch(/^Invalid record: data\.name: /);
    expect(reason('contacts', 'P-1')).toBe(
      'Invalid record: data.isPrimary: "vielleicht" is neither true (J) nor false (N) (column "Haupt")',
    );
    expect(reason('opportunities', 'A-1')).toBe(
      'Invalid record: data.expectedCloseDate: "2027-03-28 02:30" does not exist in Europe/Berlin: the clock skips it (column "Datum")',
    );
    expect(reason('opportunities', 'A-2')).toBe(
      'Invalid record: data.expectedCloseDate: "31.01.27" is not a date as "yyyy-MM-dd HH:mm" (column "Datum")',
    );
    expect(entries.find((e) => e.key === 'K-3')).toMatchObject({ action: 'create' });
    expect(entries.find((e) => e.key === 'A-3')).toMatchObject({ action: 'create' });
    expect(entries.at(-1).counts).toMatchObject({ invalid: 6, create: 2 });
  });

  it('sends an empty cell as an empty string with "empty": "empty-string", and keeps spaces with "trim": false', async () => {
    const map = f.file(
      'map.json',
      JSON.stringify({
        accounts: {
          key: 'Nr',
          fields: { name: { column: 'Firma', trim: false }, description: { column: 'Notiz', empty: 'empty-string' } },
        },
      }),
    );
    const file = f.file('a.csv', 'Nr,Firma,Notiz\nK-1,  Eins  ,\n');
    const run = await runCrm(['sync', 'apply', '--journal', `${f.dir}/j.db`, '--map', map, '--accounts', file], f.env);
    expect(run.code).toBe(0);
    expect([...f.server.fake.store.accounts.values()]).toMatchObject([{ name: '  Eins  ', description: '' }]);
  });
});
