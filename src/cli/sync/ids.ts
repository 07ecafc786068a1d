import { access } from 'node:fs/promises';
import type { SyncJournal, SyncType } from '../../sync';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import { SOURCE_TYPES } from './columns';
import type { SyncContext } from './context';
import { openJournal } from './journal';
import { replaceFile } from './replace-file';

/** One record the journal maps to the CRM: its type, its key in the source, and its CRM id. */
interface MappedId {
  readonly type: SyncType;
  readonly key: string;
  readonly crmId: string;
}

/** The header of an ids file: what `crm sync resolve --from` reads back. */
const IDS_HEADER = 'type,key,crmId\n';

/** Every record of `tenant` the journal holds a CRM id of (synced or deactivated), type by type, a page at a time. */
async function* mappedIds(journal: SyncJournal, tenant: string): AsyncGenerator<MappedId> {
  for (const type of SOURCE_TYPES) {
    let after: string | undefined;
    for (;;) {
      const page = await journal.list(tenant, type, after, 1000);
      if (page.length === 0) break;
      after = page[page.length - 1]?.key;
      for (const entry of page) if (entry.crmId !== undefined) yield { type, key: entry.key, crmId: entry.crmId };
    }
  }
}

/** A CSV cell: quoted when it holds a comma, a quote or a line end. */
const cell = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/** An id as a CSV line of `type,key,crmId`. */
const idsCsvLine = ({ type, key, crmId }: MappedId): string => `${type},${cell(key)},${cell(crmId)}\n`;

/**
 * Writes `--ids <file>`: the ids the journal maps for the tenant, as CSV, renamed into place once
 * whole, so that a run that stops leaves the old file whole.
 */
export function writeIdsFile(path: string, journal: SyncJournal, tenant: string): Promise<number> {
  return replaceFile(
    path,
    (text) => Buffer.from(text, 'utf8'),
    async (write) => {
      let count = 0;
      await write(IDS_HEADER);
      for await (const id of mappedIds(journal, tenant)) {
        await write(idsCsvLine(id));
        count++;
      }
      return count;
    },
  );
}

/**
 * `crm sync ids`: the records the journal maps to CRM ids, `type,key,crmId` as CSV on stdout
 * (NDJSON with --json), for the tenant given (--tenant, CRM_TENANT_ID) or the journal's only one.
 * Reads the journal only; no credential of the CRM is needed.
 */
export async function runIds({ io, values, help, target }: SyncContext): Promise<number> {
  if (target.kind === 'sqlite') {
    await access(target.path).catch(() => {
      throw new UsageError(`No journal at ${target.path}: crm sync apply makes one`, help);
    });
  }
  const { journal, close } = await openJournal(target, { readOnly: true, help });
  try {
    await journal.open();
    const given = typeof values.tenant === 'string' ? values.tenant : io.env.CRM_TENANT_ID;
    const tenants = (await journal.tenants?.()) ?? [];
    let tenant = given;
    if (tenant === undefined || tenant === '') {
      if (tenants.length > 1) {
        throw new UsageError(
          `The journal holds ${tenants.length} tenants (${tenants.slice(0, 5).join(', ')}${tenants.length > 5 ? ', …' : ''}): name one with --tenant <id> or CRM_TENANT_ID`,
          help,
        );
      }
      tenant = tenants[0];
    }
    const json = values.json === true;
    let text = json ? '' : IDS_HEADER;
    if (tenant !== undefined) {
      for await (const id of mappedIds(journal, tenant)) {
        text += json ? `${jsonText(id)}\n` : idsCsvLine(id);
        if (text.length >= 64 * 1024) {
          await write(io.stdout, text);
          text = '';
        }
      }
    }
    await write(io.stdout, text);
    return EXIT.ok;
  } finally {
    await close();
  }
}
