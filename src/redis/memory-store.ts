import type { PaceLearned, PaceLease, PaceReservation, PaceStore } from '../core/pace-store';

/** How late a reservation may take the time it missed, at once (timers fire late on a busy machine). */
export const CATCH_UP_MS = 50;
/** The reservations a phase keeps, to find its rate from: a phase that long has a known rate. */
const RESERVATIONS_KEPT = 500;

/** One key's state, as every store keeps it (src/redis/pace-script.ts keeps the same in a Redis hash). */
interface KeyState {
  phase: number;
  next: number;
  turn: number;
  startedAt: number;
  log: PaceReservation[];
  learned: (PaceLearned & { at: number }) | undefined;
}

/**
 * A `PaceStore` in this process's memory, on its own clock: the reference of what a store does,
 * step by step, which `redisStore()` does in Redis. Each shared pacer falls back on one of its own
 * when its store fails.
 */
export class MemoryStore implements PaceStore {
  readonly #keys = new Map<string, KeyState>();

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      state = { phase: 0, next: 0, turn: 0, startedAt: 0, log: [], learned: undefined };
      this.#keys.set(key, state);
    }
    return state;
  }

  reserve(key: string, count: number, intervalMs: number): PaceLease {
    const now = performance.now();
    const state = this.#state(key);
    // Idle, or late by more than a little: nothing saved up to send at once.
    const at = now - state.next > CATCH_UP_MS ? now : state.next;
    if (state.turn === 0) state.startedAt = at;
    if (state.log.length < RESERVATIONS_KEPT) state.log.push({ turn: state.turn, count, at, intervalMs });
    const turn = state.turn;
    state.turn += count;
    state.next = at + count * intervalMs;
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
    const state = this.#state(key);
    if (phase !== state.phase) return undefined;
    const { log } = state;
    state.phase += 1;
    state.turn = 0;
    state.log = [];
    state.next = performance.now() + pauseMs;
    return log;
  }

  learn(key: string, phase: number, learned: PaceLearned): void {
    const state = this.#state(key);
    if (phase === state.phase) state.learned = { ...learned, at: performance.now() };
  }
}
