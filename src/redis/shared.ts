import type { PaceStore } from '../core/pace-store';
import { SHARED_PACER, type SharedPacerFactory } from '../internal/waiting/pacer';
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
  const factory: SharedPacerFactory = (waits, key, logger) => new SharedPacer(waits, key, store, logger, outage);
  // Not enumerable: inspecting or spreading the store shows its own fields only.
  Object.defineProperty(store, SHARED_PACER, { value: factory, configurable: true });
  return store;
}
