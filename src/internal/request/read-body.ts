import { AttemptFailure } from '../call/failure';

/**
 * Reads a response body as text, refusing more than `limit` bytes: a declared length over the
 * limit fails before reading, and a chunked or compressed body fails as soon as it passes it,
 * so memory stays bounded whatever the server sends.
 */
export function readBodyText(response: Response, limit: number): Promise<string> {
  const body = response.body;
  if (!body) return Promise.resolve('');
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    return body
      .cancel()
      .catch(() => undefined)
      .then(() => {
        throw tooLarge(response, Number(declared));
      });
  }
  // A declared, uncompressed length within the limit is what arrives: read in one go
  // (PERFORMANCE.md, "Small things on every call").
  if (declared !== null && !response.headers.has('content-encoding')) return response.text();
  return readCapped(response, body, limit);
}

async function readCapped(response: Response, body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(response, received);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

const tooLarge = ({ status, headers }: Response, size: number) =>
  new AttemptFailure({ kind: 'too-large', status, headers, size });
