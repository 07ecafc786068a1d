import {
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmTimeoutError,
} from '../core/errors';
import { AttemptFailure, retryAfterMsOf } from './attempt';

/**
 * What the modules loaded on demand (the retrier, the limiter, the key look-up, the reporter)
 * use of the entry, handed to them by the transport rather than imported: a module they shared
 * with the entry would be a chunk of its own in an app's bundle (PERFORMANCE.md, "Chunks loaded
 * on demand"). They import only types.
 */
export const kit = {
  AttemptFailure,
  retryAfterMsOf,
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmTimeoutError,
};
export type Kit = typeof kit;
