import type { PaceLearned, PaceLease, PaceReservation, PaceStore } from '../core/pace-store';
import { rememberedForm } from '../internal/waiting/pacer';

/** How late a reservation may take the time it missed, at once (timers fire late on a busy machine). */
export const CATCH_UP_MS = 50;
/** A reservation's lateMs is kept below this (ms), as pace-script.ts keeps it. */
const LATE_KEPT_BELOW = 1_000_000;
/** The reservations a phase keeps, to find its rate from: a phase that long has a known rate. */
const RESERVATIONS_KEPT = 500;
/** How long a key nobody uses is kept after its last turn, as `redisStore()` keeps it in Redis. */
const KEEP_MS = 15 * 60_000;
/** How often the keys kept are looked over: a key is let go at most this long after its time. */
const SWEEP_MS = 60_000;
/**
 * How long a rate learned is kept after the key's last use, by default: a week, so that a nightly
 * job (or a weekly one) starts at the rate the last one learned, not cold (issue 48: a cold start
 * paid the ramp and a pause of a second, the whole gap between 1.12x and 1.14x of an 11 s job).
 */
const REMEMBER_MS = 7 * 24 * 3_600_000;
/** The longest `rememberMs` accepted: a year. */
const REMEMBER_MOST_MS = 365 * 24 * 3_600_000;

/** `rememberMs` as given to a store, checked (`where`: the store's function, for the message). */
export function rememberMsOf(value: unknown, where: string): number {
  if (value === undefined) return REMEMBER_MS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > REMEMBER_MOST_MS) {
    throw new TypeError(`${where}: rememberMs must be a whole number of milliseconds from 0 to a year`);
  }
  return value;
}

/** What was learned of a key's rate, as it is kept: with the refusals it took, and until when. */
type Remembered = PaceLearned & { at: number; refusals: number };

/** One key's state, as every store keeps it (src/redis/pace-script.ts keeps the same in a Redis hash). */
interface KeyState {
  phase: number;
  next: number;
  turn: number;
  startedAt: number;
  log: PaceReservation[];
  learned: (PaceLearned & { at: number; refusals?: number }) | undefined;
  /** The refusals what was remembered when the state was made had taken: its phases count on from them. */
  refusals: number;
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
  /** What was learned of each key's rate, kept past its schedule: `#rememberMs` after its last use. */
  readonly #remembered = new Map<string, { learned: Remembered; until: number }>();
  readonly #now: () => number;
  readonly #rememberMs: number;
  /** Set while keys are kept, unref'd: an idle store holds no timer, and none keeps a process alive. */
  #sweep: ReturnType<typeof setTimeout> | undefined;

  /**
   * `now`: the store's clock, in ms (tests pass their own); `rememberMs`: how long a rate learned
   * is kept after the key's last use (0: as long as its schedule).
   */
  constructor(now: () => number = () => performance.now(), rememberMs = REMEMBER_MS) {
    this.#now = now;
    this.#rememberMs = rememberMs;
  }

  /** How many keys are kept (for tests). */
  get size(): number {
    return this.#keys.size;
  }

  #state(key: string, now: number): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      // A key that was let go starts from what was remembered of its rate (a job of a night before).
      const kept = this.#remembered.get(key);
      const learned = kept && kept.until > now ? { ...kept.learned } : undefined;
      state = {
        phase: 0,
        next: 0,
        turn: 0,
        startedAt: 0,
        log: [],
        learned,
        refusals: learned?.refusals ?? 0,
        until: 0,
      };
      this.#keys.set(key, state);
      this.#sweep ??= this.#armSweep();
    }
    const kept = this.#remembered.get(key);
    if (kept) kept.until = now + this.#rememberMs;
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
      for (const [key, kept] of this.#remembered) if (kept.until <= now) this.#remembered.delete(key);
      this.#sweep = this.#keys.size > 0 || this.#remembered.size > 0 ? this.#armSweep() : undefined;
    }, SWEEP_MS);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  reserve(key: string, count: number, intervalMs: number, lateMs?: number): PaceLease {
    const now = this.#now();
    const state = this.#state(key, now);
    // Idle, or late by more than a little: nothing saved up to send at once.
    const at = now - state.next > CATCH_UP_MS ? now : state.next;
    if (state.turn === 0) state.startedAt = at;
    // A lateness that no clock could measure (NaN, negative, days) is not kept, as the script keeps none.
    const said = typeof lateMs === 'number' && lateMs >= 0 && lateMs < LATE_KEPT_BELOW ? lateMs : undefined;
    if (state.log.length < RESERVATIONS_KEPT)
      state.log.push(
        said === undefined
          ? { turn: state.turn, count, at, intervalMs }
          : { turn: state.turn, count, at, intervalMs, lateMs: said },
      );
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
    const state = this.#state(key, now);
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
    const state = this.#state(key, now);
    MemoryStore.#kept(state, now);
    if (phase !== state.phase) return;
    // Each phase ended with one refusal: those of this state, after those the remembered rate took.
    state.learned = { ...learned, at: now, refusals: state.refusals + phase };
    const { rate } = learned;
    // Remembered in the form a next job starts from (rememberedForm()).
    if (rate !== undefined && this.#rememberMs > 0)
      this.#remembered.set(key, {
        learned: rememberedForm({ ...state.learned, rate, refusals: state.refusals + phase }),
        until: now + this.#rememberMs,
      });
  }
}
