import { createHmac } from 'node:crypto';
import { type PaceMemory, paceMemoryOf, type RememberedPace } from '../internal/waiting/pace-memory';
import { QUIET_TIMES, RATES } from '../internal/waiting/pacer';
import type { SyncJournal, SyncJournalPace } from './journal';

/**
 * The pace remembered between runs in the sync journal (issue 48), for a client that paces alone
 * (`throttle: 'auto'` without a store: a store remembers the pace itself, `rememberMs`). A nightly
 * job in a new process started cold every night: the ramp and a pause of a second, the whole gap
 * between 1.12x and 1.14x of an 11 s job. A run now reads the tenant's paces as it starts, gives
 * its client's pacers the one of their key and base URL, and keeps what they know when it ends.
 */

/** How long a pace is remembered after the run that last used it, by default: a week. */
export const REMEMBER_PACE_MS = 7 * 24 * 3_600_000;

/**
 * A key's fingerprint: HMAC-SHA256 under a fixed label, cut to 32 hex digits (128 bits). An API
 * key, long and random, is not found again from it; the journal holds no credential.
 */
export const keyFingerprint = (key: string): string =>
  createHmac('sha256', 'crm-integration-sdk remembered pace').update(key).digest('hex').slice(0, 32);

const FINGERPRINT = /^[0-9a-f]{32}$/;

/**
 * The rates remembered for a transport's pacers, by key fingerprint, given to each pacer it makes
 * from now on: the runs of other tenants on the same transport add theirs, the last run's last.
 */
const seedsOf = new WeakMap<PaceMemory, Map<string, RememberedPace>>();

function seedsFor(memory: PaceMemory): Map<string, RememberedPace> {
  let seeds = seedsOf.get(memory);
  if (!seeds) {
    const kept = new Map<string, RememberedPace>();
    seeds = kept;
    seedsOf.set(memory, kept);
    // After the hook of another copy of this entry, if one holds the transport (the ESM and the
    // CJS build in one process): a pacer takes the first seed it is given, so this copy's first.
    const other = memory.onMade;
    memory.onMade = (credential, pacer) => {
      const remembered = kept.size > 0 ? kept.get(keyFingerprint(credential)) : undefined;
      if (remembered) pacer.seed(remembered);
      other?.(credential, pacer);
    };
  }
  return seeds;
}

/** Whether a record read from a journal is one a run may start from (any other is left unused). */
function usable(pace: SyncJournalPace, baseUrl: string, now: number, rememberMs: number): boolean {
  const within = (value: unknown, { least, most }: { least: number; most: number }) =>
    typeof value === 'number' && Number.isFinite(value) && value >= least && value <= most;
  return (
    typeof pace === 'object' &&
    pace !== null &&
    typeof pace.key === 'string' &&
    FINGERPRINT.test(pace.key) &&
    pace.baseUrl === baseUrl &&
    within(pace.rate, RATES) &&
    within(pace.ceiling, RATES) &&
    within(pace.quietMs, QUIET_TIMES) &&
    Number.isSafeInteger(pace.refusals) &&
    pace.refusals >= 0 &&
    Number.isFinite(pace.usedAt) &&
    // Forgotten `rememberMs` after its last use; one from the future (a clock stepped back) is not trusted.
    now - pace.usedAt <= rememberMs &&
    pace.usedAt <= now + 60_000
  );
}

/**
 * Seeds the pacers of `crm` with the tenant's paces remembered in `journal`, and returns what
 * keeps theirs at the run's end. Nothing here fails a run: a journal that cannot read or keep a
 * pace leaves the run to start cold.
 */
export async function recallPace(
  crm: unknown,
  journal: SyncJournal,
  tenant: string,
  rememberMs: number,
): Promise<() => Promise<void>> {
  const pacers = rememberMs > 0 ? paceMemoryOf(crm) : undefined;
  const base = (crm as { toJSON?: () => { baseUrl?: unknown } }).toJSON?.().baseUrl;
  if (!pacers || typeof base !== 'string' || !journal.paces || !journal.keepPace) return async () => {};
  const { memory, only } = pacers;
  const baseUrl = base.replace(/\/+$/, '');
  let seeds: Map<string, RememberedPace>;
  try {
    seeds = seedsFor(memory);
  } catch {
    // A pace memory that takes no hook (frozen, a stand-in's): the run starts cold.
    return async () => {};
  }
  try {
    const now = Date.now();
    for (const pace of await journal.paces(tenant)) {
      if (!usable(pace, baseUrl, now, rememberMs)) continue;
      const { rate, ceiling, quietMs, refusals, learnedAt } = pace;
      seeds.set(pace.key, { rate, ceiling, quietMs, refusals, learnedAt });
    }
  } catch {}
  return async () => {
    const usedAt = Date.now();
    try {
      for (const [credential, pacer] of memory.made) {
        const learned = only === undefined || credential === only ? pacer.remembered() : undefined;
        if (!learned) continue;
        try {
          await journal.keepPace?.(tenant, { key: keyFingerprint(credential), baseUrl, ...learned, usedAt });
        } catch {}
      }
    } catch {
      // Pacers that cannot be read (a stand-in's): nothing is kept.
    }
  };
}
