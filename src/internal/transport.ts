import type * as z from 'zod/mini';
import {
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseValidationError,
  CrmTimeoutError,
  CrmValidationError,
  type ResponseFacts,
} from '../core/errors';
import type { CallSettings, TransportOptions } from '../options';
import type { Pagination } from '../schemas/pagination';
import { useKey } from './api-key';
import { AttemptFailure, type Outcome, type Received } from './attempt';
import type { Endpoint } from './endpoint';
import { issuesOf } from './issues';
import { kit } from './kit';
import { OnDemand } from './on-demand';
import type { PreparedCall } from './prepared-call';
import { readBodyText } from './read-body';
import type { Scope } from './scope';
import type { Channels, DiagnosticsChannel } from './tracing';
import { zodCheck } from './zod-check';

type Data<E extends Endpoint> = z.output<E['data']>;

/**
 * THE request path, shared by a client and every client derived from it: `prepare()` checks a
 * call and builds what every attempt sends; `send()` sends it, unwraps the envelope, and turns
 * every failure into a `CrmError`. The order of the steps and the reasons for its shortcuts are
 * in src/internal/README.md and PERFORMANCE.md.
 */
export class Transport {
  readonly options: TransportOptions;
  readonly #base: string;
  // Loaded on demand: PERFORMANCE.md, "Chunks loaded on demand".
  readonly #retrier = new OnDemand(() =>
    import('./retrier').then(({ createAttempt, createRetrier }) => {
      const report = () => this.#reporter.loaded();
      const attempt = createAttempt(this.options, report, kit);
      return { attempt, retry: createRetrier(this.options.baseUrl, attempt, kit) };
    }),
  );
  /** What a call may wait for before an attempt (waiting.ts); a client whose key comes from a function, or that is paced, will. */
  readonly waiting = new OnDemand(() =>
    import('./waiting').then(({ Limiter, lookUpKey, Pacers }) => {
      const max = this.options.maxConcurrency;
      return { lookUpKey, limiter: max ? new Limiter(max, kit) : undefined, pacers: new Pacers(kit) };
    }),
  );
  readonly #reporter = new OnDemand(() =>
    import('./reporting').then(({ createReporter }) => createReporter(kit, this.options)),
  );
  readonly #validators = new OnDemand(() => import('./validators'));
  /** What `crm.request()`, `extraQuery` and `extraBody` need, loaded when a call first uses them: few calls do. */
  readonly hatches = new OnDemand(() => import('./hatches'));
  /** The tracing channels, where the runtime has `node:diagnostics_channel` (README.md, "Tracing"). */
  readonly #channels = channels();

  constructor(options: TransportOptions) {
    this.options = options;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    // Started now, so that no call waits for them.
    this.#retrier.preload();
    this.#reporter.preload();
    if (options.maxConcurrency) this.waiting.preload();
    if (options.validateResponses) this.#validators.preload();
  }

  /** The call, checked and built: what every attempt sends. Throws on bad input or a missing credential. */
  prepare(scope: Scope, endpoint: Endpoint, input: unknown, settings: CallSettings): PreparedCall {
    const headers = scope.headersFor(endpoint.auth, settings);
    const parsed = endpoint.parseInput(input);
    if (!parsed.success) throw new CrmValidationError(issuesOf(parsed.error, 1));
    const { path, query, body } = parsed.data;
    const { tenantId, apiKey } = scope;
    const url = path ? endpoint.fill(path) : endpoint.path;
    const payload = endpoint.tenantIn === 'body' ? { tenantId, ...(body as object) } : body;
    // Redirects are followed only within the origin (see redirects.ts), so no credential leaves it.
    const init: PreparedCall['init'] = { method: endpoint.method, headers, redirect: 'manual' };
    if (payload !== undefined) {
      init.body = JSON.stringify(payload);
      init.headers = { ...headers, 'content-type': 'application/json' };
    }
    const search = queryString(
      query as Record<string, unknown> | undefined,
      endpoint.tenantIn === 'query' ? tenantId : undefined,
    );
    return {
      href: `${this.#base}/${url}${search}`,
      init,
      where: `${endpoint.method} /${url}`,
      settings,
      scope,
      deadline: settings.totalTimeout === undefined ? undefined : Date.now() + settings.totalTimeout,
      secrets: scope.secrets,
      secretBody: endpoint.auth === 'admin',
      keyFrom: typeof apiKey === 'function' && endpoint.auth === 'apiKey' ? apiKey : undefined,
      attempts: 0,
      response: undefined,
      pagination: undefined,
    };
  }

  /** A prepared call's data, or a `CrmError`. */
  send<E extends Endpoint>(endpoint: E, call: PreparedCall): Promise<Data<E>> {
    const { extraQuery, extraBody, throttle } = call.settings;
    // Whether anyone listens is asked anew for each call: a subscriber may come and go at any time.
    if (this.#channels?.listened()) return this.#traced(endpoint, call);
    if (!call.keyFrom && !this.options.maxConcurrency && !extraQuery && !extraBody && !throttle)
      return this.#send(endpoint, call);
    return this.#sendLater(endpoint, call);
  }

  /**
   * A call published on the tracing channels, by a chunk loaded on demand (PERFORMANCE.md, "Chunks
   * loaded on demand"); if it cannot be loaded, the call is made all the same.
   */
  async #traced<E extends Endpoint>(endpoint: E, call: PreparedCall): Promise<Data<E>> {
    const send = () => this.#sendLater(endpoint, call);
    const tracing = await import('./tracing').catch(() => undefined);
    const report = () => this.#reporter.loaded();
    return await (tracing
      ? tracing.trace(this.#channels as Channels, endpoint, call, send, this.options, report, kit)
      : send());
  }

  /**
   * A call that must first wait: for its extra parameters and fields to be checked and added, for
   * its key from an `apiKey` function, or for a `maxConcurrency` slot.
   */
  async #sendLater<E extends Endpoint>(endpoint: E, call: PreparedCall): Promise<Data<E>> {
    try {
      const { extraQuery, extraBody, signal, throttle } = call.settings;
      if (extraQuery || extraBody) (await this.hatches.load()).addExtras(call, kit);
      const { lookUpKey, limiter, pacers } = await this.waiting.load();
      // A signal aborted already stops the call before a look-up or a wait; checked after an await,
      // so that its error leads to the caller (README.md, "Stacks").
      signal?.throwIfAborted();
      // A key failure becomes an error here, after the caller's `await` has attached (README.md, "Stacks").
      if (call.keyFrom) useKey(call, await lookUpKey(call, kit));
      // A slot first, then its turn at its credential's pace, before its first attempt's timeout
      // starts: a turn taken before a wait for a slot could go out during a pause.
      const send = async () => {
        if (throttle) await pacers.admit(call);
        return this.#send(endpoint, call);
      };
      return await (limiter ? limiter.run(send, call.settings.signal, call.deadline) : send());
    } catch (error) {
      throw await this.#toCrmError(error, call);
    }
  }

  /**
   * A call from its first attempt to its data, or to a `CrmError`: a plain fetch, bounded by
   * the attempt's timeout and the caller's signal; anything but a 2xx goes to ky. One async
   * frame from fetch to the envelope (PERFORMANCE.md, "the first attempt outside ky").
   */
  async #send<E extends Endpoint>(endpoint: E, call: PreparedCall): Promise<Data<E>> {
    const { signal, timeout } = call.settings;
    try {
      signal?.throwIfAborted();
      const limit = call.deadline === undefined ? timeout : Math.min(timeout, call.deadline - Date.now());
      const controller = new AbortController();
      const timer = controller.signal;
      const clock = setTimeout(() => controller.abort(), Math.max(0, limit));
      let first: Outcome;
      try {
        const init = { ...call.init, signal: signal ? AbortSignal.any([signal, timer]) : timer };
        // Logged, traced or paced, the attempt is the retrier chunk's (retrier.ts, `createAttempt`),
        // preloaded with it: without it, it is made as any other.
        const attempt =
          this.options.logger || call.trace || call.pacer ? (await this.#retrier.loaded())?.attempt : undefined;
        if (attempt) {
          first = await attempt(call.href, init, call);
        } else {
          call.attempts = 1;
          const response = await (this.options.fetch ?? globalThis.fetch)(call.href, init);
          first = { response, text: await readBodyText(response, this.options.maxResponseBytes) };
        }
      } catch (error) {
        if (signal?.aborted || error instanceof AttemptFailure) throw error;
        first = { error, timedOut: timer.aborted };
      } finally {
        clearTimeout(clock);
      }
      const { response, text } = 'response' in first && first.response.ok ? first : await this.#retried(call, first);
      return this.#unwrap(endpoint, text, response, call);
    } catch (error) {
      throw await this.#toCrmError(error, call);
    }
  }

  /** Every attempt after a first that failed, by ky; without ky, the first attempt's outcome as it is. */
  async #retried(call: PreparedCall, first: Outcome): Promise<Received> {
    const retrier = await this.#retrier.loaded();
    if (!retrier) throw failureOf(first);
    return retrier.retry(call, first);
  }

  /** The envelope's `data`; its `pagination` and the response go on the call. */
  #unwrap<E extends Endpoint>(endpoint: E, text: string, response: Response, call: PreparedCall): Data<E> {
    const { status, headers } = response;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AttemptFailure({ kind: 'not-json', status, headers, text });
    }
    if (typeof json === 'object' && json !== null && (json as { success?: unknown }).success === false) {
      throw new AttemptFailure({ kind: 'refused', status, headers, body: json, text });
    }
    // Unvalidated responses that are not even an envelope get the full check, for its precise error.
    if (this.options.validateResponses || !isFramed(endpoint, json)) {
      const validators = this.#validators.value;
      if (!validators?.envelopeValidators[endpoint.key]?.(json)) {
        // What the generated validator refuses, and everything until the validators have
        // arrived, zod's interpreter parses, for its own issues (PERFORMANCE.md, "Generated
        // response validators"); a page, record by record.
        if (!validators) this.#validators.preload();
        const validRecord = validators?.recordValidators[endpoint.key];
        const checked =
          (validRecord && validators.checkPage(endpoint, json, validRecord, kit)) || zodCheck(endpoint, json);
        if (!checked.success)
          throw new AttemptFailure({ kind: 'invalid', status, headers, body: json, text, issues: checked.issues });
        json = checked.data;
      }
    }
    const envelope = json as { data: Data<E>; pagination?: Pagination };
    call.response = response;
    call.pagination = envelope.pagination;
    return envelope.data;
  }

  /**
   * The one place where a failed call becomes a `CrmError`, in the call's own async frame (see
   * README.md, "Stacks"): by the reporter, which masks what the server said.
   */
  async #toCrmError(error: unknown, call: PreparedCall): Promise<CrmError> {
    // A signal's reason may itself be a CrmError (another call's, to cancel this one): not this call's.
    if (!call.settings.signal?.aborted && error instanceof CrmError) return error;
    const reporter = await this.#reporter.loaded();
    return reporter ? reporter.error(error, call) : unreported(error, call);
  }
}

/** The SDK's tracing channels, where the runtime has `node:diagnostics_channel` (Node, Bun, Deno); none in a browser. */
function channels(): Channels | undefined {
  try {
    const dc = (
      globalThis as { process?: { getBuiltinModule?: (id: string) => DiagnosticsChannel | undefined } }
    ).process?.getBuiltinModule?.('node:diagnostics_channel');
    if (!dc) return undefined;
    // Node (22.3 and later), Bun and Deno all have tracingChannel where they have getBuiltinModule.
    const call = dc.tracingChannel('crm-integration-sdk:call');
    const attempt = dc.tracingChannel('crm-integration-sdk:attempt');
    // Each event's channel, asked itself: Bun's tracing channels have no hasSubscribers of their own.
    const events = [call, attempt].flatMap((each) => [
      each.start,
      each.end,
      each.asyncStart,
      each.asyncEnd,
      each.error,
    ]);
    return { call, attempt, listened: () => events.some((event) => event.hasSubscribers) } as Channels;
  } catch {
    return undefined;
  }
}

/** `?tenantId=t&a=1&b=2` from the tenant and the defined values, percent-encoded; empty when there are none. */
function queryString(params: Record<string, unknown> | undefined, tenantId: string | undefined): string {
  let text = tenantId === undefined ? '' : `?tenantId=${encodeURIComponent(tenantId)}`;
  // Concatenated, not URLSearchParams: PERFORMANCE.md, "Small things on every call".
  for (const name in params) {
    const value = params[name];
    if (value !== undefined)
      text += `${text ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
  }
  return text;
}

/** An envelope's frame: success, and data of the right kind; the records' fields are not looked at. */
function isFramed(endpoint: Endpoint, json: unknown): boolean {
  const envelope = json as { success?: unknown; data?: unknown } | null;
  if (typeof envelope !== 'object' || envelope === null || envelope.success !== true) return false;
  return endpoint.list ? Array.isArray(envelope.data) && envelope.data.every(isRecord) : isRecord(envelope.data);
}

function isRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A first attempt's outcome as a failure, for when ky, which would retry it, could not be loaded. */
const failureOf = (first: Outcome): AttemptFailure =>
  new AttemptFailure(
    'response' in first
      ? {
          kind: 'http',
          status: first.response.status,
          statusText: first.response.statusText,
          headers: first.response.headers,
          text: first.text,
        }
      : first.timedOut
        ? { kind: 'timeout' }
        : { kind: 'network', cause: first.error },
  );

/**
 * A failure as a `CrmError` when the reporter could not be loaded (a browser that cannot download
 * its chunk): its class and status, and none of what the server said, which could not be masked.
 */
function unreported(error: unknown, { where, settings }: PreparedCall): CrmError {
  const failure = error instanceof AttemptFailure ? error.failure : undefined;
  if (settings.signal?.aborted) return new CrmAbortError(`Aborted: ${where}`, { cause: settings.signal.reason });
  const kind = failure?.kind;
  const status = failure && 'status' in failure ? failure.status : 0;
  // Each class takes the facts, or reads only their `cause`.
  const ErrorClass = (
    kind === 'http' || kind === 'refused'
      ? apiErrorClassFor(status)
      : status
        ? CrmResponseValidationError
        : kind === 'timeout' || kind === 'queued'
          ? CrmTimeoutError
          : kind === 'key'
            ? CrmError
            : CrmConnectionError
  ) as new (
    message: string,
    facts: ResponseFacts & ErrorOptions,
  ) => CrmError;
  return new ErrorClass(`${status ? `${status} from` : 'Failed:'} ${where}`, {
    status,
    headers: new Headers(),
    body: undefined,
    cause: kind === 'key' ? failure?.cause : undefined,
  });
}
