import { CrmError, sideEffectsOf } from '../../core/errors';
import { retryAfterMsOf } from '../../core/retry-after';
import type { Pagination } from '../../schemas/pagination';
import { AttemptFailure, isNetworkFailure, type Outcome, type Received } from '../call/failure';
import { type CallState, credentialOf, type PreparedRequest } from '../call/prepared';
import type { TransportOptions } from '../call/settings';
import { gateOf, type SendGate } from '../call/unsent';
import { withExtras } from '../hatches/extras';
import { createReporter, type Reporter } from '../report/reporter';
import { type Attempted, decide } from '../retry/decide';
import { type Channels, channels } from '../tracing/channels';
import { type CallTrace, trace } from '../tracing/trace';
import { checkEnvelope } from '../validate/envelope';
import { KeyLookupPlaces, lookUpKey } from '../waiting/key-lookup';
import { Limiter } from '../waiting/limiter';
import type { PaceMemory } from '../waiting/pace-memory';
import { Pacers } from '../waiting/pacer';
import { Waits } from '../waiting/wait';
import { type AttemptContext, attempt, type Exchange, type Paced, type Target } from './attempt';
import { withKey } from './prepare';
import { MAX_HOPS, redirectOf, unfollowedNote } from './redirects';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/** A first attempt's exchange: plain fetch (PERFORMANCE.md, "The first attempt by fetch"). */
const fetchExchange: Exchange = (fetch, href, init) => fetch(href, init);

/**
 * THE request path, shared by a client and every client derived from it: `send()` takes a
 * prepared request to its data, or to a `CrmError`. The steps, in order (src/internal/README.md):
 * the extras added, the key looked up, then per try its turn at its key's pace and a
 * `maxConcurrency` slot, one attempt, the retry decision, the wait; at last the envelope checked.
 */
export class Transport {
  declare readonly options: TransportOptions;
  /** The base URL without a trailing slash. */
  declare readonly base: string;
  readonly #origin: string;
  readonly #attempt: AttemptContext;
  readonly #reporter: Reporter;
  /** `maxConcurrency`: the slots of the requests on the wire, and, apart, each tenant's places of key look-ups. */
  readonly #slots: Limiter | undefined;
  readonly #lookups: KeyLookupPlaces | undefined;
  readonly #pacers: Pacers;
  readonly #keyWaits = new Waits('key');
  readonly #retryWaits = new Waits('retry');
  /** A retry's exchange: ky, loaded at the first retry (exchange/ky.ts); fetch where it cannot be loaded. */
  #retryExchange: Promise<Exchange> | undefined;
  /** The tracing channels, where the runtime has `node:diagnostics_channel` (README.md, "Tracing"). */
  readonly #channels: Channels | undefined = channels();

  constructor(options: TransportOptions) {
    this.options = options;
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.#origin = new URL(options.baseUrl).origin;
    this.#reporter = createReporter(options);
    this.#attempt = { options, reporter: this.#reporter };
    this.#pacers = new Pacers(options.logger, this.base);
    const max = options.maxConcurrency;
    this.#slots = max ? new Limiter(max, 'slot') : undefined;
    this.#lookups = max ? new KeyLookupPlaces(max) : undefined;
  }

  /** What `CrmSync` reads and seeds of its pacers' rates between runs. */
  get paceMemory(): PaceMemory {
    return this.#pacers;
  }

  /** A prepared call's data, or a `CrmError`; what the call learns goes into `state`. */
  send(request: PreparedRequest, state: CallState): Promise<unknown> {
    // Whether anyone listens is asked anew for each call: a subscriber may come and go at any time.
    if (this.#channels?.listened()) return this.#traced(this.#channels, request, state);
    return this.#run(request, state, undefined);
  }

  /** A call published on the tracing channels, masked as its errors are. */
  async #traced(channels: Channels, request: PreparedRequest, state: CallState): Promise<unknown> {
    // Read at each use, so that a key an apiKey function returns later is masked too.
    const call = { request, state };
    const masking = {
      redact: <T>(value: T) => this.#reporter.redact(call)(value),
      copy: (failure: unknown) => this.#reporter.copy(call, failure),
    };
    // The call's function returns before its first attempt starts, as a subscriber sees it.
    const run = async (traced: CallTrace) => {
      await undefined;
      return await this.#run(request, state, traced);
    };
    return await trace(channels, request, state, run, this.options.secretHeaders, masking);
  }

  /** The call, from its extras to its data: one loop, in one async frame (PERFORMANCE.md, "Few async frames per call"). */
  async #run(request: PreparedRequest, state: CallState, traced: CallTrace | undefined): Promise<unknown> {
    try {
      const { settings } = request;
      if (settings.extraQuery || settings.extraBody) request = withExtras(request);
      if (request.keyFrom) request = await this.#withKey(request, state);
      const waits = settings.throttle || this.#slots !== undefined;
      let refusals = 0;
      // Whether the call's send gate (call/unsent.ts) was passed and stands.
      let gated = false;
      for (let retries = 0; ; retries++) {
        const exchange = retries === 0 ? fetchExchange : await this.#kyExchange();
        // A slot only while a request is on the wire: taken after its turn, given back before any wait.
        const paced = waits ? await this.#admit(request, retries > 0) : undefined;
        let outcome: Outcome;
        let target: Target = request;
        try {
          // Once the attempt has its turn, and not before: what the gate writes (a create's intent)
          // then tells of a request about to leave, not of one still waiting (call/unsent.ts).
          // No await for a call without a gate: its attempt starts in the same turn as before.
          const gate = gated ? undefined : gateOf(settings.signal);
          if (gate) gated = await passGate(gate);
          outcome = await attempt(this.#attempt, request, target, state, exchange, paced, traced);
          for (let hop = 0; hop < MAX_HOPS && 'response' in outcome && !outcome.response.ok; hop++) {
            const next = redirectOf(outcome, target, this.#origin);
            if (!next) break;
            target = next;
            outcome = await attempt(this.#attempt, request, target, state, exchange, paced, traced);
          }
        } finally {
          if (waits) this.#slots?.release();
        }
        if ('response' in outcome && outcome.response.ok) return this.#unwrap(request, state, outcome);
        const facts = attempted(request.init.method, outcome, target.init.method !== request.init.method);
        if (facts.sideEffects === 'unknown') state.sideEffects = 'unknown';
        const decision = decide(facts, {
          retries,
          refusals,
          maxRetries: settings.maxRetries,
          maxRetryAfter: settings.maxRetryAfter,
          msLeft: request.deadline === undefined ? undefined : request.deadline - Date.now(),
          paced: paced && { waitsOut: paced.pacer.waitsOut(paced.ticket) },
        });
        if (!decision.retry) throw failureOf(outcome, this.options.baseUrl);
        if (decision.refusal) refusals += 1;
        // Nothing done so far, and a wait before the next attempt: the gate is passed again after it.
        if (gated && state.sideEffects === 'none') {
          gateOf(settings.signal)?.withdraw();
          gated = false;
        }
        if (decision.waitMs > 0) await this.#sleep(decision.waitMs, request);
      }
    } catch (error) {
      throw this.#toCrmError(error, request, state);
    }
  }

  /** ky, once loaded; a runtime that cannot load it (a browser offline) retries with fetch, and loads it again later. */
  #kyExchange(): Promise<Exchange> {
    this.#retryExchange ??= import('../exchange/ky').then(
      ({ kyExchange }) => kyExchange,
      () => {
        this.#retryExchange = undefined;
        return fetchExchange;
      },
    );
    return this.#retryExchange;
  }

  /**
   * Waits for the call's turn at its key's pace, then for a `maxConcurrency` slot. A turn that a
   * refusal voided while the call waited for its slot is taken again, the slot given back.
   */
  async #admit(request: PreparedRequest, retry: boolean): Promise<Paced | undefined> {
    const { settings, deadline } = request;
    const pacer = settings.throttle ? this.#pacers.of(credentialOf(request), settings.throttle) : undefined;
    for (let again = retry; ; again = true) {
      const ticket = pacer ? await pacer.turn(again, settings.signal, deadline, settings.maxRetryAfter) : undefined;
      await this.#slots?.acquire(settings.signal, deadline);
      if (!pacer || !ticket) return undefined;
      if (pacer.holds(ticket)) return { pacer, ticket };
      this.#slots?.release();
    }
  }

  /** The call with the key its `apiKey` function returned; each tenant's look-ups are bounded by `maxConcurrency` too. */
  async #withKey(request: PreparedRequest, state: CallState): Promise<PreparedRequest> {
    const { settings, deadline, keyFrom, tenantId } = request;
    // The place is given back once the function has answered, not when the call stops waiting for
    // it: the function cannot be stopped, and a call that gave up must not let another look-up start.
    const place = this.#lookups?.acquire(tenantId as string, settings.signal, deadline);
    await place?.held;
    const answered = place?.answered;
    // Checked after an await, so that its error leads to the caller (README.md, "Stacks").
    if (settings.signal?.aborted) {
      answered?.();
      throw settings.signal.reason;
    }
    const key = await lookUpKey(
      keyFrom as NonNullable<typeof keyFrom>,
      tenantId as string,
      settings.signal,
      deadline,
      this.#keyWaits,
      answered,
    );
    const keyed = withKey(request, key);
    state.secrets = [...state.secrets, keyed.key];
    return keyed.request;
  }

  /** A retry's backoff, or the server's wait: bounded by the call's signal and deadline. */
  async #sleep(ms: number, { settings, deadline }: PreparedRequest): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waiting = this.#retryWaits.start<void>(settings.signal, deadline, () => clearTimeout(timer));
    timer = setTimeout(() => waiting.done(), ms);
    await waiting.promise;
  }

  /** The envelope's `data`; its `pagination` and the response go into the call's state. */
  #unwrap(request: PreparedRequest, state: CallState, { response, text }: Received): unknown {
    const { status, headers } = response;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      state.sideEffects = 'unknown';
      throw new AttemptFailure({ kind: 'not-json', status, headers, text });
    }
    if (typeof json === 'object' && json !== null && (json as { success?: unknown }).success === false) {
      if (sideEffectsOf({ status, retryAfter: false, refusedInBody: true }) === 'unknown')
        state.sideEffects = 'unknown';
      throw new AttemptFailure({ kind: 'refused', status, headers, body: json, text });
    }
    const checked = checkEnvelope(request.endpoint, json, this.options.validateResponses);
    if (!checked.success) {
      // A 2xx whose data cannot be read: the server acted, and the caller cannot know on what.
      state.sideEffects = 'unknown';
      throw new AttemptFailure({ kind: 'invalid', status, headers, body: json, text, issues: checked.issues });
    }
    const envelope = checked.data as { data: unknown; pagination?: Pagination };
    state.response = response;
    state.pagination = envelope.pagination;
    return envelope.data;
  }

  /**
   * The one place where a failed call becomes a `CrmError`, in the call's own async frame (see
   * README.md, "Stacks"): by the reporter, which masks what the server said.
   */
  #toCrmError(error: unknown, request: PreparedRequest, state: CallState): CrmError {
    // A signal's reason may itself be a CrmError (another call's, to cancel this one): not this call's.
    if (!request.settings.signal?.aborted && error instanceof CrmError) return error;
    return this.#reporter.error(error, { request, state });
  }
}

/** Passes the call's send gate (true); one that rejects stops the call unsent. */
async function passGate(gate: SendGate): Promise<boolean> {
  try {
    await gate.pass();
  } catch (cause) {
    throw new CrmError('Not sent: its send gate refused it', { cause, sideEffects: 'none' });
  }
  return true;
}

/** An attempt's outcome as the retry decision reads it. */
function attempted(method: string, outcome: Outcome, redirectedAsGet: boolean): Attempted {
  if (!('response' in outcome)) {
    const { error, timedOut } = outcome;
    // A TypeError with a network failure's words; another (a custom fetch's bug) is not retried.
    const failed = timedOut ? 'timeout' : isNetworkFailure(error) ? 'network' : 'other';
    const sideEffects = redirectedAsGet
      ? 'unknown'
      : sideEffectsOf({ status: undefined, cause: timedOut ? undefined : error });
    return { method, status: undefined, failed, retryAfter: false, retryAfterMs: undefined, sideEffects };
  }
  const { status, headers } = outcome.response;
  const retryAfter = headers.has('retry-after');
  return {
    method,
    status,
    retryAfter,
    retryAfterMs: retryAfterMsOf(headers),
    // What the server did with the request itself: a redirect to a GET says it acted, whatever the GET came to.
    sideEffects: redirectedAsGet ? 'unknown' : sideEffectsOf({ status, retryAfter }),
  };
}

/** Why the call failed, from its last attempt's outcome. */
function failureOf(outcome: Outcome, baseUrl: string): AttemptFailure {
  if ('response' in outcome) {
    const { response, text } = outcome;
    const { status, statusText, headers } = response;
    return new AttemptFailure({
      kind: 'http',
      status,
      statusText,
      headers,
      text,
      note: unfollowedNote(response, baseUrl),
    });
  }
  const { error, timedOut } = outcome;
  if (error instanceof AttemptFailure) return error;
  return new AttemptFailure(timedOut ? { kind: 'timeout' } : { kind: 'network', cause: error });
}
