import type { SyncJournalEntry } from './journal';
import type { Kind } from './kinds';
import type { Run } from './run';

// The send step of an update, as create.ts is a create's: the decide step says what changed, and
// this sends it. An update is a PUT of the changed fields, which sent twice changes nothing more:
// it needs no intent at a send gate, only its entry written once answered (one that is lost is
// sent again by the next run, which finds the record still changed).

/** Sends `body` (the fields that changed) to the CRM record `crmId`; once answered, `synced` is written. */
export function sendUpdate(
  run: Run,
  kind: Kind,
  key: string,
  crmId: string,
  body: Record<string, unknown>,
  synced: SyncJournalEntry,
): void {
  const { type } = kind;
  run.sender.push({
    run: async () => {
      try {
        await run.call((options) =>
          (kind.update as NonNullable<Kind['update']>)(run.settings.crm, crmId, body, options),
        );
        run.committer.put(synced);
        run.tally.count(type, 'updated');
      } catch (error) {
        run.failed(type, key, error);
      }
    },
  });
}
