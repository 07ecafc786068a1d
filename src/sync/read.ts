// The read step of a run or a plan: each list as a stream of batches, each record as it was when
// its list gave it.
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
