// Every flag that names a file a command reads (a source, --from, --match, --map, a key file, the
// journal and the files SQLite keeps beside it) adds to what its outputs must never write over: the
// list is made here, in one place, so that a flag added is a flag guarded, and the command keeps its
// parsing and dispatch.
import { UsageError } from '../usage-error';
import { SOURCE_TYPES } from './columns';
import type { SyncContext } from './context';
import { type Input, journalFiles, refuseOverwrite, refuseRedirect, sameFile } from './paths';

/**
 * Refuses, before anything is opened, a command line whose output would destroy one of its
 * inputs: the journal or a source taken as the journal, the report, or a redirection of the
 * command's own output.
 */
export async function refuseClobbering({ io, values, help, target }: SyncContext): Promise<Input[]> {
  const read: Input[] = [];
  for (const type of SOURCE_TYPES) {
    const file = values[type];
    if (typeof file === 'string' && file !== '' && file !== '-')
      read.push({ what: `the --${type} file ${file}`, path: file });
  }
  for (const flag of ['from', 'match', 'map']) {
    const file = values[flag];
    if (typeof file === 'string' && file !== '') read.push({ what: `the --${flag} file ${file}`, path: file });
  }
  for (const flag of ['api-key-file', 'admin-token-file']) {
    // Named by its flag alone: a key given where its path goes must not be echoed.
    const file = values[flag];
    if (typeof file === 'string' && file !== '') read.push({ what: `the --${flag}`, path: file });
  }
  // A Postgres journal is no file of this machine's: only the outputs and the sources are compared.
  const journalPath = target.kind === 'sqlite' ? target.path : undefined;
  if (journalPath !== undefined) await refuseOverwrite('--journal', journalPath, read, help);
  const [journal, ...besideJournal] = journalPath === undefined ? [] : await journalFiles(journalPath);
  for (const beside of besideJournal) {
    for (const input of read) {
      if (await sameFile(beside.path, input.path)) {
        throw new UsageError(
          `--journal ${journalPath}: SQLite writes ${beside.path} beside it, which is ${input.what}`,
          help,
        );
      }
    }
  }
  const inputs = [...(journal ? [journal] : []), ...besideJournal, ...read];
  if (typeof values.report === 'string' && values.report !== '') {
    await refuseOverwrite('--report', values.report, inputs, help);
  }
  await refuseRedirect(
    [
      { name: 'output', stream: io.stdout },
      { name: 'error', stream: io.stderr },
    ],
    inputs,
    help,
  );
  return inputs;
}
