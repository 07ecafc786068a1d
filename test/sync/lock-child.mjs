// A process that test/sync/sqlite-journal.test.ts runs beside others on one SQLite journal, as a
// container would: LOCK_PID and LOCK_HOST stand in for its pid and host name (every container's
// main process is pid 1; host names repeat). It takes acme's run lock and says, a JSON line each,
// what happened: {"held"} or {"refused"}, then {"lost"} if it learns it lost the lock. On stdin,
// `write` tries a journal write and says how it went; `release` releases the lock and exits.
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import { createInterface } from 'node:readline';

const { LOCK_JOURNAL, LOCK_RUN, LOCK_PID, LOCK_HOST, LOCK_LEASE_MS } = process.env;
if (LOCK_PID) Object.defineProperty(process, 'pid', { value: Number(LOCK_PID) });
if (LOCK_HOST) {
  os.hostname = () => LOCK_HOST;
  syncBuiltinESMExports();
}
const { sqliteJournal } = await import('../../dist/sync.js');

const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const journal = sqliteJournal(LOCK_JOURNAL, { leaseMs: Number(LOCK_LEASE_MS) });
await journal.open();
let lock;
try {
  lock = await journal.lock('acme', LOCK_RUN);
  say({ event: 'held', pid: process.pid, host: os.hostname() });
  lock.signal?.addEventListener('abort', () => say({ event: 'lost', reason: lock.signal.reason?.reason }));
} catch (error) {
  say({ event: 'refused', reason: error.reason, message: error.message });
  journal.close();
  process.exit(0);
}
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'write') {
    try {
      journal.write('acme', {
        put: [
          {
            type: 'accounts',
            key: LOCK_RUN,
            state: 'synced',
            crmId: 'x',
            hash: 'h',
            data: '{}',
            attemptedAt: undefined,
            requestId: undefined,
            runId: LOCK_RUN,
          },
        ],
      });
      say({ event: 'written' });
    } catch (error) {
      say({ event: 'write refused', reason: error.reason });
    }
  }
  if (line === 'release') {
    await lock.release();
    journal.close();
    process.exit(0);
  }
}
