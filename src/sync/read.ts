// The read step of a run or a plan: each list as a stream of batches, each record as it was when
// its list gave it, and what of each record can be read before it is decided (its key, its data,
// the parents it names), so that the decide step only meets records it can decide.
import type { ReadRecord } from './decide';
import { invalid } from './invalid';
import type { SyncType } from './journal';
import { keyProblem } from './keys';
import type { Kind } from './kinds';
import { othersDone } from './other-runs';
import { FAILED, IN_DOUBT, type Seen } from './parent-ids';
import type { Run } from './run';
import { SOURCE_FAULT } from './source-fault';
import type { SyncList } from './types';

/** Records read from a list before their journal entries are read, in one call. */
export const BATCH = 500;

/** An error a list threw: the run rejects with it as it is. */
export class SourceFailure {
  constructor(readonly error: unknown) {}
}

/** A list's size when it tells it (an array's `length`, a Set's `size`), for the progress's ETA. */
export const sizeOf = (list: unknown): number | undefined => {
  const size = (list as { length?: unknown; size?: unknown }).length ?? (list as { size?: unknown }).size;
  return typeof size === 'number' && Number.isSafeInteger(size) ? size : undefined;
};

/**
 * A record as it was when its list gave it: a list may hand out one object again and again
 * (a CSV reader reusing its row), and a batch holds 500 before they are read.
 */
function snapshot(record: unknown): unknown {
  if (record === null || typeof record !== 'object') return record;
  const { data } = record as { data?: unknown };
  const copy: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) copy.data = { ...data };
  return copy;
}

const ABORTED = Symbol('aborted');

/** The list's records in batches of {@link BATCH}, ending early (without a batch) once `signal` aborts. */
export async function* batchesOf(list: SyncList<unknown>, signal: AbortSignal | undefined): AsyncGenerator<unknown[]> {
  let batch: unknown[] = [];
  if (typeof (list as Iterable<unknown>)[Symbol.iterator] === 'function') {
    // A sync iterable is read without an await per record (PERFORMANCE.md, "The sync's journal in batches").
    const iterator = (list as Iterable<unknown>)[Symbol.iterator]();
    for (;;) {
      let step: IteratorResult<unknown>;
      try {
        step = iterator.next();
      } catch (error) {
        throw new SourceFailure(error);
      }
      if (step.done) break;
      batch.push(snapshot(step.value));
      if (batch.length === BATCH) {
        yield batch;
        batch = [];
      }
    }
  } else {
    // A list waiting on its source (a cursor that hangs) does not hold an aborted run. Each step
    // is its own promise, which the abort rejects: a Promise.race with one promise that never
    // settles keeps every step it lost, and so every record of the list, until the list ends.
    const iterator = (list as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    let stop: ((reason: unknown) => void) | undefined;
    const onAbort = () => stop?.(ABORTED);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        let step: IteratorResult<unknown>;
        try {
          if (signal?.aborted) throw ABORTED;
          step = await new Promise<IteratorResult<unknown>>((resolve, reject) => {
            stop = reject;
            Promise.resolve(iterator.next()).then(resolve, reject);
          });
        } catch (error) {
          if (error !== ABORTED) throw new SourceFailure(error);
          void Promise.resolve(iterator.return?.()).catch(() => {});
          return;
        }
        if (step.done) break;
        batch.push(snapshot(step.value));
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
    } finally {
      stop = undefined;
      signal?.removeEventListener('abort', onAbort);
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The records of a batch the decide step can take: each one's key usable and new to its list,
 * its data an object, its references given once and by key; the others fail (invalid) here. The
 * parents they name that the run has not met are read from the journal, once other runs' creates
 * of them end; a generation's slice records the keys the batch gave.
 */
export async function readBatch(run: Run, kind: Kind, batch: unknown[], seen: Seen): Promise<ReadRecord[]> {
  const { type } = kind;
  const ready: ReadRecord[] = [];
  const wanted = new Map<SyncType, Set<string>>();
  const keysRead: string[] = [];
  for (const raw of batch) {
    const record = (raw ?? {}) as Record<string, unknown>;
    const key = record.key;
    const unusable = keyProblem(key);
    if (unusable !== undefined || typeof key !== 'string') {
      run.unusableKeys.set(type, (run.unusableKeys.get(type) ?? 0) + 1);
      const message =
        typeof key === 'string' && key !== ''
          ? `Not usable: a key must be ${unusable}`
          : 'Required: a non-empty string, unique in its list';
      run.invalid(type, typeof key === 'string' ? key : String(key ?? ''), invalid('key', message));
      continue;
    }
    if (seen.has(key)) {
      run.invalid(
        type,
        key,
        invalid('key', `Repeated: another ${kind.noun} of this run has key ${JSON.stringify(key)}`),
      );
      continue;
    }
    seen.add(key);
    keysRead.push(key);
    const fault = (record as { [SOURCE_FAULT]?: { field: string; message: string } })[SOURCE_FAULT];
    if (fault) {
      run.invalid(type, key, invalid(fault.field, fault.message));
      run.ids.remember(type, key, FAILED);
      continue;
    }
    const data = record.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      run.invalid(type, key, invalid('data', `Required: the ${kind.noun}'s fields, an object`));
      run.ids.remember(type, key, FAILED);
      continue;
    }
    let both: string | undefined;
    for (const ref of kind.references) {
      const parentKey = record[ref.keyField];
      if (parentKey === undefined) continue;
      const unusableParent = keyProblem(parentKey);
      if (unusableParent !== undefined || typeof parentKey !== 'string') {
        both = `${ref.keyField}: ${unusableParent}`;
        break;
      }
      const direct = ref.direct.find((field) => (data as Record<string, unknown>)[field] !== undefined);
      if (direct !== undefined) {
        both = `${ref.keyField} and data.${direct} both give the ${ref.parent} reference: give one`;
        break;
      }
      const parentIds = run.ids.of(ref.parent);
      if (!parentIds.has(parentKey)) {
        const keys = wanted.get(ref.parent) ?? new Set<string>();
        wanted.set(ref.parent, keys);
        keys.add(parentKey);
      }
    }
    if (both !== undefined) {
      run.invalid(type, key, invalid(both.split(':')[0] as string, both));
      run.ids.remember(type, key, FAILED);
      continue;
    }
    ready.push({ key, record, data: data as Record<string, unknown> });
  }

  // A generation's slice: the keys the batch gave, in one write, before any is sent.
  if (run.settings.generation && !run.plan) await run.settings.generation.read(type, keysRead);

  // Parents this run has not met: what the journal holds of them, once other runs' creates of them end.
  for (const [parent, keys] of wanted) {
    const ids = run.ids.of(parent);
    const all = [...keys];
    for (let i = 0; i < all.length; i += 1000) {
      await othersDone(run, parent, all.slice(i, i + 1000));
      const found = await run.settings.journal.get(run.settings.tenant, parent, all.slice(i, i + 1000));
      for (const [k, entry] of found) {
        ids.set(k, entry.state === 'synced' || entry.state === 'deactivated' ? (entry.crmId as string) : IN_DOUBT);
      }
    }
  }
  return ready;
}
