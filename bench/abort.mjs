// Aborting many queued calls at once: BENCH_ABORT_CALLS calls (default 100,000) of one CrmClient
// wait on one AbortSignal, and one controller.abort() lets them all go. Measured: how long the
// abort() call itself holds the event loop (its listeners run synchronously inside it), and how
// long until every call has settled. Every call must reject with CrmAbortError.
//
// Three places a call waits, each with a fetch of its own and no network:
// - maxConcurrency queue: maxConcurrency 1, the first call's fetch never answers (until its signal
//   aborts), every other call waits for its slot;
// - pacer pause: throttle 'auto', the first request answered 429 with Retry-After: 60, every call
//   of the key waits out the pause. Any request that went out before the refusal was heard is
//   refused too, so that its call waits out the pause as well; how many did is a row of its own
//   (one, when the pacer sends the first request alone; at 10,000 calls today's let 6,900 to all
//   10,000 go in three runs, its 250 ms wait for the first answer having passed while the calls
//   were still being queued);
// - apiKey look-up: an apiKey function that never resolves, every call waits for its key.
//
// One run of each, not interleaved rounds: at 100,000 calls a quadratic abort takes tens of
// seconds a setup, and the question is its order of magnitude, not a few percent.
import { CrmClient } from '../dist/index.js';
import { sleep } from './measure.mjs';

export const ABORT_CALLS = Number(process.env.BENCH_ABORT_CALLS ?? 100_000);
if (!Number.isSafeInteger(ABORT_CALLS) || ABORT_CALLS < 2) {
  throw new Error('BENCH_ABORT_CALLS must be a whole number of at least 2');
}

const BASE_URL = 'http://bench.invalid';
const TENANT = 'tenant_bench';

/** A fetch that answers only by rejecting, with the reason, when its signal aborts. */
const hanging = (_url, init) =>
  new Promise((_, reject) => {
    const { signal } = init;
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

const refused = () =>
  new Response(JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } }), {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '60' },
  });

/** Polls until `ready()` holds; fails the benchmark after `ms`. */
async function until(ready, what, ms = 60_000) {
  const start = performance.now();
  while (!ready()) {
    if (performance.now() - start > ms) throw new Error(`abort bench: not ${what} within ${ms} ms`);
    await sleep(1);
  }
}

/**
 * Each setup: a client, and how to know that its calls are all waiting. `queued()` resolves once
 * they are; `check()` says what must hold afterwards (what the fetch and the key function saw).
 */
const SETUPS = {
  'maxConcurrency queue': () => {
    let fetched = 0;
    const crm = new CrmClient({
      baseUrl: BASE_URL,
      apiKey: 'bench-key',
      tenantId: TENANT,
      maxConcurrency: 1,
      fetch: (url, init) => {
        fetched += 1;
        return hanging(url, init);
      },
    });
    return {
      crm,
      queued: () => until(() => fetched === 1, 'sending the first call'),
      check: () => fetched === 1 || `fetch called ${fetched} times, expected 1`,
    };
  },
  'pacer pause after a 429': () => {
    let fetched = 0;
    const crm = new CrmClient({
      baseUrl: BASE_URL,
      apiKey: 'bench-key',
      tenantId: TENANT,
      throttle: 'auto',
      fetch: async () => {
        fetched += 1;
        return refused();
      },
    });
    return {
      crm,
      queued: async () => {
        await until(() => fetched > 0, 'sending the first request');
        // The refusal heard and the pause begun: every call of the key now waits it out.
        await sleep(50);
      },
      check: () => true,
      sent: () => fetched,
    };
  },
  'apiKey look-up': () => {
    let looked = 0;
    const crm = new CrmClient({
      baseUrl: BASE_URL,
      tenantId: TENANT,
      apiKey: () => {
        looked += 1;
        return new Promise(() => {});
      },
      fetch: () => Promise.reject(new Error('nothing may be sent')),
    });
    return {
      crm,
      queued: () => until(() => looked === ABORT_CALLS, 'looking up every key'),
      check: () => looked === ABORT_CALLS || `apiKey called ${looked} times, expected ${ABORT_CALLS}`,
    };
  },
};

/** One setup, once: { blockMs, settledMs }. Throws when a call did not reject with CrmAbortError. */
async function abortQueued(name) {
  const { crm, queued, check, sent } = SETUPS[name]();
  const controller = new AbortController();
  const { signal } = controller;
  const calls = new Array(ABORT_CALLS);
  for (let i = 0; i < ABORT_CALLS; i++) calls[i] = crm.contacts.list({}, { signal });
  const settled = Promise.allSettled(calls);
  await queued();
  await sleep(0);

  const start = performance.now();
  controller.abort();
  const blockMs = performance.now() - start;
  const results = await settled;
  const settledMs = performance.now() - start;

  const wrong = results.filter((r) => r.status !== 'rejected' || r.reason?.name !== 'CrmAbortError');
  if (wrong.length > 0) {
    const first = wrong[0];
    const what = first.status === 'fulfilled' ? 'resolved' : `${first.reason?.name}: ${first.reason?.message}`;
    throw new Error(`abort bench, ${name}: ${wrong.length} calls did not reject with CrmAbortError (first: ${what})`);
  }
  const checked = check();
  if (checked !== true) throw new Error(`abort bench, ${name}: ${checked}`);
  return { blockMs, settledMs, sent: sent?.() };
}

/**
 * Records two rows per setup: the event-loop block of abort(), and the time until every call
 * settled; and for the pacer, how many requests went out before its pause.
 */
export async function runAbort(record) {
  const workload = `abort ${ABORT_CALLS.toLocaleString('en-US')} queued calls on one signal`;
  for (const name of Object.keys(SETUPS)) {
    const { blockMs, settledMs, sent } = await abortQueued(name);
    record(workload, name, blockMs, 'ms event-loop block', undefined, '< 1000 ms');
    record(workload, name, settledMs, 'ms until all settled');
    if (sent !== undefined) record(workload, name, sent, 'requests sent before the pause', undefined, '1');
  }
}
