// `crm sync resolve` once its flags are read: it opens the CRM and the journal, and settles one
// record here or hands a file to resolve-file.ts or an export to resolve-match.ts. Apart from the
// command, as ids.ts and status.ts are, so that the command holds the parsing and the dispatch and
// each command's run reads on its own.
import { CrmSync } from '../../sync';
import { type ConnectionValues, clientFor } from '../config';
import { EXIT } from '../failure';
import { jsonText } from '../output';
import type { SourceType } from './columns';
import type { SyncContext } from './context';
import { openJournal } from './journal';

/** How `crm sync resolve` settles, as its flags say: a file of records, an export, or one record. */
export type ResolveWay =
  | { readonly way: 'from'; readonly file: string }
  | { readonly way: 'match'; readonly file: string; readonly type: SourceType }
  | { readonly way: 'one'; readonly type: SourceType; readonly key: string; readonly crmId: string | null };

/** `crm sync resolve`, the way its flags said (`way`, checked by the command). */
export async function runResolve(context: SyncContext, way: ResolveWay): Promise<number> {
  const { io, values, help, target } = context;
  const { crm } = await clientFor(values as ConnectionValues, io, 'tenant');
  // The one place resolve opens its journal, whichever way it settles.
  const { journal, close } = await openJournal(target, { readOnly: false, help });
  try {
    const sync = new CrmSync(crm, { journal });
    if (way.way === 'from') {
      const { resolveFromFile } = await import('./resolve-file');
      return await resolveFromFile(context, sync, way.file);
    }
    if (way.way === 'match') {
      const { resolveByMatch } = await import('./resolve-match');
      return await resolveByMatch(context, sync, journal, way.type, way.file);
    }
    const { type, key, crmId } = way;
    await sync.resolve(type, key, crmId, { force: values.force === true });
    // jsonText escapes what JSON.stringify leaves raw (U+2028, bidi controls), as every other line of crm does.
    const said =
      crmId === null ? 'not in the CRM: the next apply creates it' : `the CRM holds it as ${jsonText(crmId)}`;
    io.stderr.write(`${type} ${jsonText(key.slice(0, 80))}: ${said}\n`);
    return EXIT.ok;
  } finally {
    await close();
  }
}
