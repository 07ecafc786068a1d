import { CrmError } from '../core/errors';
import { knowsGates, type SendGate, unsentOnly } from '../internal/call/unsent';
import type { RequestOptions } from '../options';
import type { SyncJournalClaim, SyncJournalEntry } from './journal';
import type { Committer } from './sender';

/** A shared journal's answer that the create is another run's. */
type Elsewhere = Exclude<SyncJournalClaim, { outcome: 'claimed' }>;

/** What became of a create sent through its send gate (call/unsent.ts). */
export type Gated<T> =
  /** Another run holds or has done it (a shared journal's claim): nothing was sent. */
  | { readonly at: 'elsewhere'; readonly claim: Elsewhere }
  /** Its key's reservation lapsed before its turn, and another run may hold it: nothing was written, nothing sent. */
  | { readonly at: 'lost' }
  /** Its intent could not be written: nothing was sent, and the run stops on `error`. */
  | { readonly at: 'journal'; readonly error: unknown }
  /** It failed before its turn came (the run stopped, its key could not be had): nothing written, nothing sent. */
  | { readonly at: 'unsent'; readonly error: unknown }
  /** Its intent written, it went: its answer, and the fence its outcome is committed under (claims). */
  | {
      readonly at: 'sent';
      readonly fence: number | undefined;
      readonly answer: Answer<T>;
    };

/** Thrown by a gate whose create is another run's: the request must not leave. */
class ClaimedElsewhere extends Error {}

type Answer<T> = { readonly created: T } | { readonly error: unknown };

/**
 * Makes the call with a signal of its own carrying `gate` (the gate is this call's; the run's
 * `signal`, joined, is shared): the record created, or the error the call failed with.
 */
async function sendThrough<T>(
  gate: SendGate,
  signal: AbortSignal | undefined,
  send: (options: RequestOptions) => Promise<T>,
): Promise<Answer<T>> {
  const options = { signal: unsentOnly(AbortSignal.any(signal ? [signal] : []), undefined, gate) };
  try {
    return { created: await send(options) };
  } catch (error) {
    return { error };
  }
}

/** A failure that says nothing was done: the request never left. */
const nothingDone = <T>(answer: Answer<T>): answer is { readonly error: CrmError } =>
  'error' in answer && answer.error instanceof CrmError && answer.error.sideEffects === 'none';

/**
 * Sends a create whose intent is written at its send gate: once its request has its turn (its
 * key, its pace, a slot), just before it is handed to fetch, with the other intents at their
 * gates then (Committer.intend). `send` makes the call with the options it is given, whose signal
 * (the run's, `signal`, joined) carries the gate. On a shared journal, claimed before its turn
 * ({@link claimedAhead}).
 */
export async function sendGated<T>(
  committer: Committer,
  intent: SyncJournalEntry,
  resend: boolean,
  signal: AbortSignal | undefined,
  send: (options: RequestOptions) => Promise<T>,
  client: unknown,
): Promise<Gated<T>> {
  // A client that would not pass the gate gets the intent written before the call, as a shared
  // journal's claim is: never a create on the wire without it.
  if (committer.claims && committer.reserves && knowsGates(client)) {
    return await reservedAhead(committer, intent, resend, signal, send);
  }
  if (committer.claims || !knowsGates(client)) return await claimedAhead(committer, intent, resend, signal, send);
  let passed: { fence: number | undefined } | undefined;
  let refused: Gated<T> | undefined;
  const gate: SendGate = {
    pass: async () => {
      let claim: SyncJournalClaim | undefined;
      try {
        claim = await committer.intend(intent, resend);
      } catch (error) {
        refused = { at: 'journal', error };
        throw error;
      }
      if (claim !== undefined && claim.outcome !== 'claimed') {
        refused = { at: 'elsewhere', claim };
        throw new ClaimedElsewhere('claimed by another run');
      }
      passed = { fence: claim?.fence };
    },
    // Answered with nothing done and waiting for a retry: not in doubt meanwhile.
    withdraw: () => committer.withdraw(intent),
  };
  const answer = await sendThrough(gate, signal, send);
  if (refused) return refused;
  if (passed) return { at: 'sent', fence: passed.fence, answer };
  // Its gate never passed, though the client passes gates: a failure that says nothing was done
  // never left; anything else is kept as sent (its outcome written, in doubt if unknown), which
  // is never wrong about the CRM.
  if (nothingDone(answer)) return { at: 'unsent', error: answer.error };
  return { at: 'sent', fence: undefined, answer };
}

/**
 * With a client that does not pass send gates ({@link knowsGates}), the intent is written before
 * the call starts, so that no create is ever on the wire without it. On a shared journal, the
 * create is claimed before it waits for its turn, as it was before send gates: a claim refused at the gate (another worker's record, which overlapping workers meet
 * often) would waste the turn it had at the fleet's shared pace, and W8 took 1.4 times as long.
 * A killed worker's claims lapse with its lease, and their records are in doubt, as before.
 */
async function claimedAhead<T>(
  committer: Committer,
  intent: SyncJournalEntry,
  resend: boolean,
  signal: AbortSignal | undefined,
  send: (options: RequestOptions) => Promise<T>,
): Promise<Gated<T>> {
  let claim: SyncJournalClaim | undefined;
  try {
    claim = await committer.intend(intent, resend);
  } catch (error) {
    return { at: 'journal', error };
  }
  if (claim !== undefined && claim.outcome !== 'claimed') return { at: 'elsewhere', claim };
  const options = { signal: unsentOnly(AbortSignal.any(signal ? [signal] : [])) };
  try {
    return { at: 'sent', fence: claim?.fence, answer: { created: await send(options) } };
  } catch (error) {
    return { at: 'sent', fence: claim?.fence, answer: { error } };
  }
}

/**
 * On a shared journal that reserves keys (Committer.reserves): the key is claimed before the
 * request waits for its turn, as {@link claimedAhead} does (a key another worker holds costs no
 * turn of the fleet's pace), but only reserved; its intent is written at the send gate, under the
 * claim's fence, with the other intents at their gates. A worker killed while its creates wait for
 * their turn leaves their keys free once its lease lapses, not in doubt; a reservation given up
 * (the request failed before its turn) frees its key at once.
 */
async function reservedAhead<T>(
  committer: Committer,
  intent: SyncJournalEntry,
  resend: boolean,
  signal: AbortSignal | undefined,
  send: (options: RequestOptions) => Promise<T>,
): Promise<Gated<T>> {
  let claim: SyncJournalClaim;
  try {
    claim = await committer.reserve(intent, resend);
  } catch (error) {
    return { at: 'journal', error };
  }
  if (claim.outcome !== 'claimed') return { at: 'elsewhere', claim };
  const { fence } = claim;
  let passed = false;
  let refused: Gated<T> | undefined;
  const gate: SendGate = {
    pass: async () => {
      let held: boolean;
      try {
        held = await committer.intendFenced(intent, fence);
      } catch (error) {
        refused = { at: 'journal', error };
        throw error;
      }
      if (!held) {
        refused = { at: 'lost' };
        throw new ClaimedElsewhere('its reservation lapsed');
      }
      passed = true;
    },
    withdraw: () => committer.withdrawFenced(intent, fence),
  };
  const answer = await sendThrough(gate, signal, send);
  // A journal that failed at the gate stops the run; its reservation lapses with its lease.
  if (refused) return refused;
  if (passed) return { at: 'sent', fence, answer };
  if (nothingDone(answer)) {
    committer.release(fence);
    return { at: 'unsent', error: answer.error };
  }
  // As sendGated: kept as sent, its outcome committed under the fence (in doubt if unknown).
  return { at: 'sent', fence, answer };
}
