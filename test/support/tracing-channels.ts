import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach } from 'vitest';
import type { CrmAttemptContext, CrmCallContext } from '../../src/index';

export const callChannel = tracingChannel<unknown, CrmCallContext>('crm-integration-sdk:call');
export const attemptChannel = tracingChannel<unknown, CrmAttemptContext>('crm-integration-sdk:attempt');

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const stop of cleanups.splice(0)) stop();
});
/** Runs `stop` after the current test (or now, if called). */
export const onCleanup = (stop: () => void): void => {
  cleanups.push(stop);
};

type Hook<C> = (context: C) => void;
export interface Hooks<C> {
  start?: Hook<C>;
  end?: Hook<C>;
  asyncStart?: Hook<C>;
  asyncEnd?: Hook<C>;
  error?: Hook<C>;
}

/** Every event of both channels as 'call:start' / 'attempt:asyncEnd #1', and the contexts seen. */
export function record(options: { call?: Hooks<CrmCallContext>; attempt?: Hooks<CrmAttemptContext> } = {}) {
  const events: string[] = [];
  const calls: CrmCallContext[] = [];
  const attempts: CrmAttemptContext[] = [];
  const handlers = <C extends object>(name: string, seen: C[], label: (context: C) => string, hooks: Hooks<C> = {}) => {
    const on = (event: keyof Hooks<C>) => (context: C) => {
      if (event === 'start') seen.push(context);
      events.push(`${name}:${event} ${label(context)}`);
      hooks[event]?.(context);
    };
    return {
      start: on('start'),
      end: on('end'),
      asyncStart: on('asyncStart'),
      asyncEnd: on('asyncEnd'),
      error: on('error'),
    };
  };
  const callHandlers = handlers('call', calls, (c: CrmCallContext) => c.operation, options.call);
  const attemptHandlers = handlers('attempt', attempts, (a: CrmAttemptContext) => `#${a.attempt}`, options.attempt);
  callChannel.subscribe(callHandlers);
  attemptChannel.subscribe(attemptHandlers);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    callChannel.unsubscribe(callHandlers);
    attemptChannel.unsubscribe(attemptHandlers);
  };
  onCleanup(stop);
  return { events, calls, attempts, stop };
}

/**
 * Runs `run` with every 'uncaughtException' listener (vitest's included) replaced by one that
 * collects, and gives back what was collected once a few ticks have passed: Node's
 * diagnostics_channel reports a subscriber's exception there, on the next tick.
 */
export async function collectUncaught(
  run: () => Promise<unknown>,
): Promise<{ uncaught: unknown[]; result: PromiseSettledResult<unknown> }> {
  const uncaught: unknown[] = [];
  const saved = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const collect = (error: unknown) => {
    uncaught.push(error);
  };
  process.on('uncaughtException', collect);
  try {
    const [result] = await Promise.allSettled([run()]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { uncaught, result: result as PromiseSettledResult<unknown> };
  } finally {
    process.off('uncaughtException', collect);
    for (const listener of saved) process.on('uncaughtException', listener);
  }
}

/** Everything a value shows, deeply, for "does it hold this secret" checks. */
export { inspect } from 'node:util';
