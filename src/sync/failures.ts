import type { CrmError } from '../core/errors';
import type { SyncType } from './journal';
import type { SyncFailure } from './types';

/** Failures a chunk holds: its keys fill 64 KiB, an ordinary heap object (a larger one is a large object of its own). */
const CHUNK = 8192;
/** The most reasons (a type and an error) looked up by their error, to be kept once. */
const INDEXED_REASONS = 4096;

/** Why records failed: their type and error. */
interface Reason {
  readonly type: SyncType;
  readonly error: CrmError;
}

/** One chunk of failures: the keys, and beside each the index of its reason. */
interface Chunk {
  readonly keys: string[];
  readonly reasons: Uint32Array;
}

/**
 * The records a run could not sync, kept compactly until its report (issue 45, 7): each record's
 * key and, beside it in a typed array, the index of its reason (its type and error), kept once for
 * the records that fail alike (invalid.ts, SharedErrors). A source whose every record fails holds its keys
 * and 12 bytes each while the run goes on, where an object each took 56; the report's objects
 * are made once, at its end. The chunks grow without copying: an array grown by copies leaves
 * its old copies (megabytes, for a million) to the next full GC.
 */
export class Failures {
  readonly #chunks: Chunk[] = [];
  #length = 0;
  readonly #reasons: Reason[] = [];
  /** Each reason's index, by type and error: up to {@link INDEXED_REASONS}; past them, a failure's reason is its own. */
  readonly #index = new Map<SyncType, Map<CrmError, number>>();
  #indexed = 0;

  add(type: SyncType, key: string, error: CrmError): void {
    const at = this.#length % CHUNK;
    if (at === 0) this.#chunks.push({ keys: [], reasons: new Uint32Array(CHUNK) });
    const chunk = this.#chunks[this.#chunks.length - 1] as Chunk;
    chunk.keys.push(key);
    chunk.reasons[at] = this.#reasonOf(type, error);
    this.#length++;
  }

  #reasonOf(type: SyncType, error: CrmError): number {
    let byError = this.#index.get(type);
    if (!byError) {
      byError = new Map();
      this.#index.set(type, byError);
    }
    const known = byError.get(error);
    if (known !== undefined) return known;
    const reason = this.#reasons.push({ type, error }) - 1;
    if (this.#indexed < INDEXED_REASONS) {
      byError.set(error, reason);
      this.#indexed++;
    }
    return reason;
  }

  /** The failures as the report gives them, in the order they came. */
  list(): SyncFailure[] {
    const failed: SyncFailure[] = new Array(this.#length);
    let i = 0;
    for (const { keys, reasons } of this.#chunks) {
      for (let j = 0; j < keys.length; j++) {
        const { type, error } = this.#reasons[reasons[j] as number] as Reason;
        failed[i++] = { type, key: keys[j] as string, error };
      }
    }
    return failed;
  }
}
