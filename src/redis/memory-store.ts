import type { PaceLearned, PaceLease, PaceReservation, PaceStore } from '../core/pace-store';

/** How late a reservation may take the time it missed, at once (timers fire late on a busy machine). */
export const CATCH_UP_MS = 50;
/** The reservations a phase keeps, to find its rate from: a phase that long has a known rate. */
const RESERVATIONS_KEPT = 500;
/** How long a key nobody uses is kept after its last turn, as `redisStore()` keeps it in Redis. */
const KEEP_MS = 15 * 60_000;
/** How often the keys kept are looked over: a key is let go at most this long after its time. */
const SWEEP_MS = 60_000;

/** One key's state, as every store keeps it (src/redis/pace-script.ts keeps the same in a Redis hash). */
interface KeyState {
  phase: number;
  next: number;
  turn: number;
  startedAt: number;
  log: PaceReservation[];
  learned: (PaceLearned & { at: number }) | undefined;
  /** When it is let go, unless used again: `KEEP_MS` after its last use or its last turn, whichever is later. */
  until: number;
}

/**
 * A `PaceStore` in this process's memory, on its own clock: the reference of what a store does,
 * step by step, which `redisStore()` does in Redis. Each shared pacer falls back on one of its own
 * when its store fails. A key unused for `KEEP_MS` after its last turn is let go, as Redis's TTL
 * lets it go, within a minute: memory follows the keys in use, not every key ever paced.
 */
export class MemoryStore implements PaceStore {
  readonly #keys = new Map<string, KeyState>();
  readonly #now: () => number;
  /** Set while keys are kept, unref'd: an idle store holds no timer, and none keeps a process alive. */
  #sweep: ReturnType<typeof setTimeout> | undefined;

  /** `now`: the store's clock, in ms (tests pass their own). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** How many keys are kept (for tests). */
  get size(): number {
    return this.#keys.size;
  }

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      state = { phase: 0, next: 0, turn: 0, startedAt: 0, log: [], learned: undefined, until: 0 };
      this.#keys.set(key, state);
      this.#sweep ??= this.#armSweep();
    }
    return state;
  }

  /** Kept `KEEP_MS` past now or its next turn, as Redis's TTL is set at each step (pace-script.ts). */
  static #kept(state: KeyState, now: number): void {
    state.until = Math.max(now, state.next) + KEEP_MS;
  }

  #armSweep(): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      const now = this.#now();
      for (const [key, state] of this.#keys) if (state.until <= now) this.#keys.delete(key);
      this.#sweep = this.#keys.size > 0 ? this.#armSweep() : undefined;
    }, SWEEP_MS);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  reserve(key: string, count: number, intervalMs: number): PaceLease {
    const now = this.#now();
    const state = this.#state(key);
    // Idle, or late by more than a little: nothing saved up to send at once.
    const at = now - state.next > CATCH_UP_MS ? now : state.next;
    if (state.turn === 0) state.startedAt = at;
    if (state.log.length < RESERVATIONS_KEPT) state.log.push({ turn: state.turn, count, at, intervalMs });
    const turn = state.turn;
    state.turn += count;
    state.next = at + count * intervalMs;
    MemoryStore.#kept(state, now);
    return {
      phase: state.phase,
      turn,
      delayMs: Math.max(0, at - now),
      now,
      startedAt: state.startedAt,
      learned: state.learned,
    };
  }

  refuse(key: string, phase: number, _turn: number, pauseMs: number): readonly PaceReservation[] | undefined {
    const now = this.#now();
    const state = this.#state(key);
    MemoryStore.#kept(state, now);
    if (phase !== state.phase) return undefined;
    const { log } = state;
    state.phase += 1;
    state.turn = 0;
    state.log = [];
    state.next = now + pauseMs;
    MemoryStore.#kept(state, now);
    return log;
  }

  learn(key: string, phase: number, learned: PaceLearned): void {
    const now = this.#now();
    const state = this.#state(key);
    MemoryStore.#kept(state, now);
    if (phase === state.phase) state.learned = { ...learned, at: now };
  }
}
