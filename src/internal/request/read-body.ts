import { AttemptFailure } from '../call/failure';
import type { AttemptBound } from './bound';

const ignore = (): void => {};
/** Used without `stream`, a decoder keeps nothing between calls: one serves every body. */
const utf8 = new TextDecoder();

/**
 * Reads a response body as text, refusing more than `limit` bytes: a declared length over the
 * limit fails before reading, and any body fails as soon as it passes it, so memory stays bounded
 * whatever the server sends. The read ends when the attempt does (`bound` cancels its reader),
 * whatever the body's stream does with fetch's signal.
 */
export function readBodyText(response: Response, limit: number, bound: AttemptBound): Promise<string> {
  const body = response.body;
  if (!body) return Promise.resolve('');
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    return body
      .cancel()
      .catch(ignore)
      .then(() => {
        throw tooLarge(response, Number(declared));
      });
  }
  const reader = body.getReader();
  bound.reading(reader);
  return readCapped(response, reader, limit, bound);
}

/**
 * The chunks kept as they come and decoded once at the end, as `Response.text()` does, so that a
 * body in one chunk (most) is decoded from it as it is (PERFORMANCE.md, "Small things on every call").
 */
async function readCapped(
  response: Response,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
  bound: AttemptBound,
): Promise<string> {
  let first: Uint8Array | undefined;
  let more: Uint8Array[] | undefined;
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    bound.over();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel().catch(ignore);
      throw tooLarge(response, received);
    }
    if (first === undefined) first = value;
    else if (more === undefined) more = [value];
    else more.push(value);
  }
  if (first === undefined) return '';
  if (more === undefined) return utf8.decode(first);
  const whole = new Uint8Array(received);
  whole.set(first);
  let at = first.byteLength;
  for (const chunk of more) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return utf8.decode(whole);
}

const tooLarge = ({ status, headers }: Response, size: number) =>
  new AttemptFailure({ kind: 'too-large', status, headers, size });
