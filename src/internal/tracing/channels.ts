import type { CrmAttemptContext, CrmCallContext } from '../../core/trace';

/**
 * What the SDK uses of a `TracingChannel` of `node:diagnostics_channel`, typed here: the source
 * does not depend on Node's types, since it runs where there is no Node.
 */
interface TracingChannelOf<C extends object> {
  readonly start: { readonly hasSubscribers: boolean };
  readonly end: { readonly hasSubscribers: boolean };
  readonly asyncStart: { readonly hasSubscribers: boolean };
  readonly asyncEnd: { readonly hasSubscribers: boolean };
  readonly error: { readonly hasSubscribers: boolean };
  tracePromise<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    context: C,
    thisArg: unknown,
    ...args: A
  ): Promise<R>;
}

/** What the SDK uses of `node:diagnostics_channel`. */
interface DiagnosticsChannel {
  tracingChannel: (name: string) => TracingChannelOf<object>;
}

/** The two tracing channels of README.md, "Tracing". */
export interface Channels {
  readonly call: TracingChannelOf<CrmCallContext>;
  readonly attempt: TracingChannelOf<CrmAttemptContext>;
  /** Whether any event of either has a subscriber. */
  readonly listened: () => boolean;
}

/**
 * The first client's channels, held for the process: Bun (1.4.5) collects a tracing channel no
 * one references, with its subscribers, so a channel an app subscribes to after a client was made
 * and dropped could be gone when the next client looks. Held, it is the one each client finds.
 */
// biome-ignore lint/correctness/noUnusedVariables: held for its reference alone, never read (see above).
let held: Channels | undefined;

/** The SDK's tracing channels, where the runtime has `node:diagnostics_channel` (Node, Bun, Deno); none in a browser. */
export function channels(): Channels | undefined {
  const made = make();
  held ??= made;
  return made;
}

function make(): Channels | undefined {
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
