import {
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmTimeoutError,
  CrmValidationError,
  requestIdOf,
} from '../core/errors';
import { AttemptFailure, retryAfterMsOf } from './attempt';
import { issuesOf, NOT_THE_TENANT } from './issues';
import { parseContext } from './parse-context';
import { readBodyText } from './read-body';
import { zodCheck } from './zod-check';

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
  CrmValidationError,
  NOT_THE_TENANT,
  requestIdOf,
  issuesOf,
  parseContext,
  readBodyText,
  zodCheck,
};
export type Kit = typeof kit;
