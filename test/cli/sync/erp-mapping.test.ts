import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeText } from '../../../src/cli/sync/text-file';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-erp-');

/** `lines` as a Windows-1252 file with CRLF line ends, as the ERP writes it. */
const cp1252 = (name: string, lines: readonly string[]) => {
  const path = join(f.dir, name);
  writeFileSync(path, encodeText(`${lines.join('\r\n')}\r\n`, 'windows-1252'));
  return path;
};

/** The mapping of the issue, grown to every column of the day-1 export. */
const MAPPING = {
  accounts: {
    key: 'Kundennr',
    encoding: 'windows-1252',
    fields: {
      name: 'Firma',
      annualRevenue: { column: 'Umsatz', number: { decimal: ',', thousands: '.' } },
      status: { column: 'Status', values: { aktiv: 'active', inaktiv: 'inactive', interessent: 'prospect' } },
      city: 'Ort',
      employees: 'Mitarbeiter',
      industry: { value: 'Wholesale' },
    },
  },
  contacts: {
    key: 'PersNr',
    encoding: 'windows-1252',
    accountKey: 'Kundennr',
    fields: {
      firstName: 'Vorname',
      lastName: 'Nachname',
      email: 'EMail',
      isPrimary: { column: 'Haupt', boolean: { true: ['J', 'ja'], false: ['N', 'nein'] } },
      status: { column: 'Status', values: { aktiv: 'active', inaktiv: 'inactive' } },
    },
  },
  opportunities: {
    key: 'AuftragNr',
    encoding: 'windows-1252',
    accountKey: 'Kundennr',
    contactKey: 'PersNr',
    fields: {
      name: 'Bezeichnung',
      amount: { column: 'Betrag', number: { decimal: ',', thousands: '.' } },
      probability: { column: 'Wahrscheinlichkeit', number: { decimal: ',' } },
      expectedCloseDate: { column: 'Abschluss', date: { format: 'dd.MM.yyyy', timeZone: 'Europe/Berlin' } },
      closeDate: { column: 'Angelegt', date: { format: 'yyyy-MM-dd HH:mm', timeZone: 'Europe/Berlin' } },
    },
  },
  activities: {
    key: 'AktNr',
    encoding: 'windows-1252',
    opportunityKey: 'AuftragNr',
    fields: {
      type: { column: 'Art', values: { Anruf: 'call', Termin: 'meeting', 'E-Mail': 'email' } },
      subject: 'Betreff',
      activityDate: { column: 'Datum', date: { format: 'yyyy-MM-dd HH:mm', timeZone: 'Europe/Berlin' } },
    },
  },
};

/** The ERP's day-1 export: `;`, decimal commas, J/N, aktiv, German dates, Windows-1252, its own header names. */
function dayOneExport(mapping: unknown = MAPPING) {
  return {
    map: f.file('erp-map.json', JSON.stringify(mapping, null, 2)),
    accounts: cp1252('Kunden.csv', [
      'Kundennr;Firma;Umsatz;Status;Ort;Mitarbeiter;Bemerkung',
      'K-1001;Müller & Söhne GmbH;1.200.000,50;aktiv;Köln;120;nicht gemappt',
      'K-1002;"Bäckerei Weiß; Filiale Süd";12.345,00;inaktiv;Straßburg;8;',
      'K-1003;Œuvre € Ltd;0,99;Interessent ;Zürich;;',
    ]),
    contacts: cp1252('Personen.csv', [
      'PersNr;Kundennr;Vorname;Nachname;EMail;Haupt;Status',
      'P-1;K-1001;Jürgen;Größe;j.groesse@mueller.example;J;aktiv',
      'P-2;K-1001;Zoë;Ähnlich;z.aehnlich@mueller.example;n;Inaktiv',
      'P-3;K-1002;Björn;Weiß;b.weiss@baeckerei.example;ja;aktiv',
    ]),
    opportunities: cp1252('Auftraege.csv', [
      'AuftragNr;Kundennr;PersNr;Bezeichnung;Betrag;Wahrscheinlichkeit;Abschluss;Angelegt',
      'A-1;K-1001;P-1;Rahmenvertrag Öl;1.200.000,50;0,75;31.01.2027;2026-10-14 09:30',
      'A-2;K-1002;;Brötchen für 2027;312.800,00;1;30.06.2027;2026-07-01 23:15',
    ]),
    activities: cp1252('Aktivitaeten.csv', [
      'AktNr;AuftragNr;Art;Betreff;Datum',
      'T-1;A-1;anruf;Erstgespräch mit Herrn Größe;2026-10-14 09:30',
      'T-2;A-2;Termin;Verkostung in Süd;2026-12-01 14:00',
    ]),
  };
}

const files = (e: ReturnType<typeof dayOneExport>) => [
  '--map',
  e.map,
  '--accounts',
  e.accounts,
  '--contacts',
  e.contacts,
  '--opportunities',
  e.opportunities,
  '--activities',
  e.activities,
];

const byName = <T extends { name?: string | null | undefined }>(records: Map<string, T>, name: string) =>
  [...records.values()].find((record) => record.name === name);

describe("crm sync loads an ERP's day-1 export with one mapping file", () => {
  it('plans every record a create, none invalid, and exits 0', async () => {
    const e = dayOneExport();
    const journal = join(f.dir, 'erp.db');
    const plan = await runCrm(['sync', 'plan', '--journal', journal, ...files(e)], f.env);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    const lines = plan.stdout.trim().split('\n');
    expect(JSON.parse(lines.at(-1) as string).counts).toMatchObject({ create: 10, invalid: 0, blocked: 0 });
    expect(lines.slice(0, -1).map((line) => JSON.parse(line).action)).toEqual(Array(10).fill('create'));
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
  });

  it('creates every record with every field as in the source, and a re-run sends nothing', async () => {
    const e = dayOneExport();
    const journal = join(f.dir, 'erp.db');
    const run = await runCrm(['sync', 'apply', '--journal', journal, ...files(e)], f.env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ created: 10, failed: [], inDoubt: [] });

    const { accounts, contacts, opportunities, activities } = f.server.fake.store;
    expect([accounts.size, contacts.size, opportunities.size, activities.size]).toEqual([3, 3, 2, 2]);
    const mueller = byName(accounts, 'Müller & Söhne GmbH');
    expect(mueller).toMatchObject({
      annualRevenue: 1_200_000.5,
      status: 'active',
      city: 'Köln',
      employees: '120',
      industry: 'Wholesale',
    });
    // A quoted cell holding the separator is one cell.
    const baeckerei = byName(accounts, 'Bäckerei Weiß; Filiale Süd');
    expect(baeckerei).toMatchObject({ annualRevenue: 12_345, status: 'inactive', city: 'Straßburg', employees: '8' });
    // € is a byte of Windows-1252 (0x80) that Latin-1 has not; a value is matched trimmed, without case.
    const oeuvre = byName(accounts, 'Œuvre € Ltd');
    expect(oeuvre).toMatchObject({ annualRevenue: 0.99, status: 'prospect', city: 'Zürich' });
    expect(oeuvre).not.toHaveProperty('employees');

    const people = [...contacts.values()].sort((a, b) => String(a.email).localeCompare(String(b.email)));
    expect(people).toMatchObject([
      { firstName: 'Björn', lastName: 'Weiß', isPrimary: true, status: 'active', accountId: baeckerei?.id },
      { firstName: 'Jürgen', lastName: 'Größe', isPrimary: true, status: 'active', accountId: mueller?.id },
      { firstName: 'Zoë', lastName: 'Ähnlich', isPrimary: false, status: 'inactive', accountId: mueller?.id },
    ]);

    const jurgen = people[1];
    const deal = byName(opportunities, 'Rahmenvertrag Öl');
    expect(deal).toMatchObject({
      amount: 1_200_000.5,
      probability: 0.75,
      accountId: mueller?.id,
      contactId: jurgen?.id,
    });
    // A date alone is that day's midnight in Berlin; a date and time, that time there (summer and winter).
    expect(deal?.expectedCloseDate).toBe('2027-01-31T00:00:00+01:00');
    expect(deal?.closeDate).toBe('2026-10-14T09:30:00+02:00');
    expect(Date.parse(deal?.expectedCloseDate ?? '')).toBe(Date.UTC(2027, 0, 30, 23, 0));
    const rolls = byName(opportunities, 'Brötchen für 2027');
    expect(rolls).toMatchObject({ amount: 312_800, probability: 1, accountId: baeckerei?.id });
    expect(rolls?.expectedCloseDate).toBe('2027-06-30T00:00:00+02:00');
    expect(rolls?.closeDate).toBe('2026-07-01T23:15:00+02:00');

    const acts = [...activities.values()].sort((a, b) => String(a.subject).localeCompare(String(b.subject)));
    expect(acts).toMatchObject([
      { type: 'call', subject: 'Erstgespräch mit Herrn Größe', activityDate: '2026-10-14T09:30:00+02:00' },
      { type: 'meeting', subject: 'Verkostung in Süd', activityDate: '2026-12-01T14:00:00+01:00' },
    ]);

    const sent = f.server.fake.requests.length;
    const again = await runCrm(['sync', 'apply', '--journal', journal, ...files(e)], f.env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, updated: 0, unchanged: 10 });
    expect(f.server.fake.requests.slice(sent).filter((r) => r.method !== 'GET')).toHaveLength(0);
  });
});

describe('--failed of a mapped export', () => {
  it("writes the bad rows as they came (';', Windows-1252, CRLF, the ERP's columns), and the file fixed loads the rest", async () => {
    const journal = join(f.dir, 'acme.db');
    const map = f.file('erp-map.json', JSON.stringify({ accounts: MAPPING.accounts }, null, 2));
    const accounts = cp1252('Kunden.csv', [
      'Kundennr;Firma;Umsatz;Status;Ort;Mitarbeiter;Bemerkung',
      'K-1;Müller & Söhne GmbH;1.200.000,50;aktiv;Köln;120;',
      'K-2;Bäckerei Weiß;12.345,00;verkauft;Straßburg;8;€ offen',
      'K-3;;0,99;aktiv;Zürich;;',
    ]);
    const failed = join(f.dir, 'Kunden-fehler.csv');
    const first = await runCrm(
      ['sync', 'apply', '--journal', journal, '--map', map, '--accounts', accounts, '--failed', failed],
      f.env,
    );
    expect(first.code).toBe(9);
    expect(f.server.fake.store.accounts.size).toBe(1);
    const written = readFileSync(failed);
    // Windows-1252 bytes: ß is 0xDF and € 0x80, never UTF-8's two and three bytes.
    expect(written.includes(Buffer.from([0xdf]))).toBe(true);
    expect(written.includes(Buffer.from('ß', 'utf8'))).toBe(false);
    const text = new TextDecoder('windows-1252').decode(written);
    const lines = text.split('\r\n');
    expect(lines[0]).toBe('Kundennr;Firma;Umsatz;Status;Ort;Mitarbeiter;Bemerkung;error;field');
    expect(lines[1]).toMatch(
      /^K-2;Bäckerei Weiß;12\.345,00;verkauft;Straßburg;8;€ offen;"Invalid record: data\.status: ""verkauft"" is not in the values map.*";Status$/,
    );
    expect(lines[2]).toMatch(/^K-3;;0,99;aktiv;Zürich;;;.*;Firma$/);
    expect(lines.slice(3)).toEqual(['']);

    // The user fixes the two rows in the file as it is, and loads it again.
    const fixed = text.replace(';verkauft;', ';inaktiv;').replace('K-3;;', 'K-3;Zürcher AG;');
    writeFileSync(failed, encodeText(fixed, 'windows-1252'));
    const second = await runCrm(['sync', 'apply', '--journal', journal, '--map', map, '--accounts', failed], f.env);
    expect(second.code).toBe(0);
    const names = [...f.server.fake.store.accounts.values()].map((a) => a.name).sort();
    expect(names).toEqual(['Bäckerei Weiß', 'Müller & Söhne GmbH', 'Zürcher AG']);
  });
});
