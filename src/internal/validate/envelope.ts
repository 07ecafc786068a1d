import type { Endpoint } from '../endpoint/define';
import { envelopeValidators, recordValidators } from './envelope-validators.generated';
import { checkPage } from './page-check';
import { type Checked, zodCheck } from './zod-check';

/**
 * A response body (parsed JSON) checked as the endpoint's envelope, and what the call returns of
 * it: the generated validator first, zod's interpreter for what it refuses, for its issues
 * (PERFORMANCE.md, "Generated response validators"); a page, record by record. Without
 * `validateResponses`, only the frame is checked: success, and data of the right kind.
 */
export function checkEnvelope(endpoint: Endpoint, json: unknown, validate: boolean): Checked {
  // Unvalidated responses that are not even an envelope get the full check, for its precise error.
  if (!validate && isFramed(endpoint, json)) return { success: true, data: json };
  if (envelopeValidators[endpoint.key]?.(json)) return { success: true, data: json };
  const validRecord = recordValidators[endpoint.key];
  return (validRecord && checkPage(endpoint, json, validRecord)) || zodCheck(endpoint, json);
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
