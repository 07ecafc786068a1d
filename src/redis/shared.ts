import type { PaceStore } from '../core/pace-store';
import { PACERS_KEPT, SHARED_PACER, type SharedPacerFactory } from '../internal/waiting/pacer';
import { SharedPacer } from './shared-pacer';

/**
 * Makes a `PaceStore` of your own (over another engine than Redis) a store that
 * `throttle: { mode: 'auto', store }` accepts: the pacer that shares a pace through a store ships
 * with this entry, so that the main entry does not grow by it. `redisStore()` and `memoryStore()`
 * return stores made so already. The same object is returned.
 *
 * @example
 * ```ts
 * const store = sharedPaceStore({ reserve, refuse, learn }); // your PaceStore
 * const crm = new CrmClient({ throttle: { mode: 'auto', store } });
 * ```
 */
export function sharedPaceStore<S extends PaceStore>(store: S): S {
  if (typeof store?.reserve !== 'function' || typeof store.refuse !== 'function' || typeof store.learn !== 'function') {
    throw new TypeError('sharedPaceStore(store): store must have reserve(), refuse() and learn()');
  }
  const outage = { down: false };
  // One pacer per transport (its waits) and key, as the main entry keeps its own.
  const pacers = new WeakMap<object, Map<string, SharedPacer>>();
  const factory: SharedPacerFactory = (waits, key, logger, base = '') => {
    const ofTransport = pacers.get(waits) ?? new Map<string, SharedPacer>();
    pacers.set(waits, ofTransport);
    let pacer = ofTransport.get(key);
    if (!pacer) {
      if (ofTransport.size >= PACERS_KEPT)
        for (const [each, old] of ofTransport) if (old.idle()) ofTransport.delete(each);
      pacer = new SharedPacer(waits, key, store, logger, outage, base);
      ofTransport.set(key, pacer);
    }
    return pacer;
  };
  // Not enumerable: inspecting or spreading the store shows its own fields only.
  Object.defineProperty(store, SHARED_PACER, { value: factory, configurable: true });
  return store;
}
