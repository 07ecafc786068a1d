// What few calls need, in one chunk loaded on demand: `crm.request()`, `extraQuery` and
// `extraBody`, `toArray()`, the error of a list that runs away.
export { adHocCall, request } from './ad-hoc';
export { addExtras } from './extras';
export { pageBoundError, toArray } from './lists';
